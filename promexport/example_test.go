package promexport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// In a run over several models, each model's part of the tick has its own
// series; the load step and tritontop's CPU stay the run's.
func Example_severalModels() {
	exp, err := promexport.New(promexport.Options{Models: []string{"resnet50", "bert"}})
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	exp.Add(stats.Snapshot{
		Tick:   stats.ClientStats{Requests: 300, Successes: 300},
		Load:   stats.Load{Step: 1},
		System: stats.SystemStats{ProcessCPU: 0.5},
		Models: []stats.Model{
			{Name: "resnet50", Tick: stats.ClientStats{Requests: 100, Successes: 100}},
			{Name: "bert", Tick: stats.ClientStats{Requests: 200, Successes: 200}},
		},
	})
	exp.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, promexport.MetricsPath, nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "tritontop_requests_total") || strings.HasPrefix(line, "tritontop_load_step") ||
			strings.HasPrefix(line, "tritontop_process_cpu") {
			fmt.Println(line)
		}
	}
	// Output:
	// tritontop_load_step 1
	// tritontop_process_cpu_cores 0.5
	// tritontop_requests_total{model="bert"} 200
	// tritontop_requests_total{model="resnet50"} 100
}
