package promexport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tritontop/tritontop/promexport"
	"github.com/tritontop/tritontop/stats"
)

// A headless worker adds its Exporter to the run's snapshot sinks and
// serves it for the cluster's Prometheus.
func Example() {
	exp, err := promexport.New(promexport.Options{Model: "resnet50", Worker: "2"})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := exp.Serve(ctx, "127.0.0.1:0") // --prometheus-addr
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	// Once per tick, from the collector's fan-out:
	exp.Add(stats.Snapshot{Tick: stats.ClientStats{Requests: 120, Successes: 118, Errors: 2,
		ErrorsByCode: []stats.ErrorCount{{Code: "UNAVAILABLE", Count: 2}}}})

	resp, err := http.Get("http://" + srv.Addr().String() + promexport.MetricsPath)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "tritontop_request") && strings.Contains(line, "_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// tritontop_request_errors_total{code="UNAVAILABLE",model="resnet50",worker="2"} 2
	// tritontop_request_retries_total{model="resnet50",worker="2"} 0
	// tritontop_request_successes_total{model="resnet50",worker="2"} 118
	// tritontop_requests_cancelled_total{model="resnet50",worker="2"} 0
	// tritontop_requests_total{model="resnet50",worker="2"} 120
}
