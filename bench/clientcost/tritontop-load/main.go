// Command tritontop-load drives the identity model with tritontop's driver
// in closed loop and feeds every result to a stats.Collector, as `tritontop
// --headless` does: per-request latency histograms, tick, window and
// whole-run summaries, and the server's statistics polled once per tick.
// It prints how many requests the collector counted as successful; run
// under /usr/bin/time it gives the client's CPU cost per request with full
// statistics on.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton"
)

func main() {
	addr := flag.String("u", "127.0.0.1:8001", "server gRPC address")
	conc := flag.Int("concurrency", 4, "requests in flight")
	dur := flag.Duration("d", 10*time.Second, "how long to send")
	streaming := flag.Bool("streaming", false, "send over gRPC streams")
	withStats := flag.Bool("stats", true, "feed results to the statistics collector (false: only count them, to isolate the driver's cost)")
	flag.Parse()

	ctx := context.Background()
	client, err := triton.Dial(ctx, *addr, triton.Options{Protocol: "grpc"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	md, err := client.ModelMetadata(ctx, "identity", "")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := client.ModelConfig(ctx, "identity", "")
	if err != nil {
		log.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{Shapes: map[string][]int64{"INPUT0": {16}}})
	if err != nil {
		log.Fatal(err)
	}
	d, err := driver.New(driver.Options{
		Client:    client,
		Requests:  reqs,
		Streaming: *streaming,
		Load:      load.Target{Mode: load.Concurrency, Concurrency: *conc},
	})
	if err != nil {
		log.Fatal(err)
	}
	time.AfterFunc(*dur, func() { d.Stop(5 * time.Second) })
	if !*withStats {
		countOnly(d)
		return
	}
	col := stats.NewCollector(stats.CollectorOptions{
		Results: d.Results(),
		Control: d,
		Epoch:   d.Epoch(),
		Server:  stats.NewServerPoller(client, "identity", ""),
	})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var last stats.Snapshot
	if err := col.Run(ctx, func(s stats.Snapshot) { last = s }); err != nil {
		log.Fatal(err)
	}
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	fmt.Printf("completed %d failed %d ticks %d p99 %v\n",
		last.Run.Successes, last.Run.Errors, last.Seq, last.Run.Latency.P99)
	if last.Run.Successes == 0 {
		os.Exit(1)
	}
}

// countOnly runs d and counts its results without statistics.
func countOnly(d *driver.Driver) {
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	var ok, failed int
	for batch := range d.Results() {
		for i := range batch {
			if batch[i].OK() {
				ok++
			} else {
				failed++
			}
		}
	}
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	fmt.Printf("completed %d failed %d\n", ok, failed)
	if ok == 0 {
		os.Exit(1)
	}
}
