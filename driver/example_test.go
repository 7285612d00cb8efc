package driver_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// Example drives a simulated Triton at 4 requests in flight for a moment,
// then at 100 requests/s, and counts what came back.
func Example() {
	ctx := context.Background()
	srv, err := sim.Start(ctx, sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := triton.Dial(ctx, srv.GRPCAddr(), triton.Options{Protocol: "grpc"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// Requests are built from what the server says about the model.
	md, err := client.ModelMetadata(ctx, "simple", "")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := client.ModelConfig(ctx, "simple", "")
	if err != nil {
		log.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{BatchSize: 1})
	if err != nil {
		log.Fatal(err)
	}

	d, err := driver.New(driver.Options{
		Client:   client,
		Requests: reqs,
		Load:     load.Target{Mode: load.Concurrency, Concurrency: 4},
	})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	// Four requests in flight for 200 ms, then 100 requests a second for
	// 200 ms, then stop, letting those in flight finish.
	time.AfterFunc(200*time.Millisecond, func() { d.SetStep(1, load.Target{Mode: load.Rate, Rate: 100}) })
	time.AfterFunc(400*time.Millisecond, func() { d.Stop(time.Second) })

	// Results must be consumed until the channel closes.
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
	fmt.Println("some succeeded:", ok > 20, "failed:", failed)
	// Output: some succeeded: true failed: 0
}
