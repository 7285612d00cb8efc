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

// ExampleNewBalancer spreads a closed loop over two simulated replicas of
// the same model and counts what each one answered.
func ExampleNewBalancer() {
	ctx := context.Background()
	var replicas []driver.ReplicaClient
	for range 2 {
		srv, err := sim.Start(ctx, sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"})
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		c, err := triton.Dial(ctx, srv.GRPCAddr(), triton.Options{})
		if err != nil {
			log.Fatal(err)
		}
		defer c.Close()
		replicas = append(replicas, c)
	}
	bal, err := driver.NewBalancer(replicas, driver.BalancerOptions{Policy: driver.RoundRobin})
	if err != nil {
		log.Fatal(err)
	}
	defer bal.Close()

	first := replicas[0].(triton.Client)
	md, err := first.ModelMetadata(ctx, "simple", "")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := first.ModelConfig(ctx, "simple", "")
	if err != nil {
		log.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{})
	if err != nil {
		log.Fatal(err)
	}
	d, err := driver.New(driver.Options{Client: bal, Requests: reqs,
		Load: load.Target{Mode: load.Concurrency, Concurrency: 4}})
	if err != nil {
		log.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, func() { d.Stop(time.Second) })
	var ok [2]int
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		for batch := range d.Results() {
			for _, r := range batch {
				if r.OK() {
					ok[r.Endpoint]++
				}
			}
		}
	}()
	if err := d.Run(ctx); err != nil {
		log.Fatal(err)
	}
	<-counted
	// Round robin gives each replica every other request.
	fmt.Println("both replicas answered:", ok[0] > 0 && ok[1] > 0, "replicas up:", bal.UpCount())
	// Output: both replicas answered: true replicas up: 2
}
