package session_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tritontop/tritontop/session"
)

// A headless run of one model, recorded, from a program: the phases in
// order, and the run's error from Finish.
func Example() {
	cfg := session.Config{
		URL: "localhost:8001", Model: "resnet50", Concurrency: 8,
		Tick: time.Second, Duration: 30 * time.Second, Drain: 5 * time.Second,
		Record: "resnet50.jsonl", Headless: true,
	}
	s, err := session.New(cfg, nil, os.Stdout, os.Stderr) // nil: session.Build
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Connect(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	s.Wait(ctx)
	if err := s.Finish(ctx); err != nil {
		fmt.Println(err)
	}
}
