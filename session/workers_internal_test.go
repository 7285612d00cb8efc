package session

import (
	"bytes"
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
)

// TestWorkerShare: each worker's share of the load, and of a range's
// levels, adds up to the whole; the first c mod N workers take one more.
func TestWorkerShare(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		set    func(c *Config)
		whole  float64
		shares [][]float64 // per worker: the initial level, then the range's levels
	}{
		{"concurrency 10", func(c *Config) { c.Concurrency = 10 }, 10, [][]float64{{4}, {3}, {3}}},
		{"rate 100", func(c *Config) { c.RequestRate = 100 }, 100, [][]float64{{100.0 / 3}, {100.0 / 3}, {100.0 / 3}}},
		{"concurrency range 3:11:4", func(c *Config) { c.ConcurrencyRange, c.StepDuration = "3:11:4", 2*time.Second }, 3,
			[][]float64{{1, 1, 3, 4}, {1, 1, 2, 4}, {1, 1, 2, 3}}},
		{"rate range 30:90:30", func(c *Config) { c.RequestRateRange, c.StepDuration = "30:90:30", 2*time.Second }, 30,
			[][]float64{{10, 10, 20, 30}, {10, 10, 20, 30}, {10, 10, 20, 30}}},
	}
	for _, tc := range cases {
		for i, want := range tc.shares {
			c := Defaults()
			c.Model, c.Workers.Count, c.Workers.Index = "simple", 3, i
			tc.set(&c)
			if err := c.check(io.Discard); err != nil {
				t.Fatalf("%s, worker %d: %v", tc.name, i, err)
			}
			sc, err := loadFromFlags(&c)
			if err != nil {
				t.Fatalf("%s, worker %d: %v", tc.name, i, err)
			}
			got := []float64{sc.initial.Level()}
			if sw, ok := sc.search.(plan.Sweep); ok {
				for _, l := range sw.Levels {
					got = append(got, l.Level())
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, worker %d: levels %v, want %v", tc.name, i, got, want)
			}
			if c.Workers.whole.Level() != tc.whole {
				t.Errorf("%s, worker %d: whole load %v", tc.name, i, c.Workers.whole)
			}
		}
	}
	// Without --workers, the load is the whole.
	c := Defaults()
	c.Model, c.Concurrency = "simple", 10
	if err := c.check(io.Discard); err != nil {
		t.Fatal(err)
	}
	if sc, err := loadFromFlags(&c); err != nil || sc.initial != (load.Target{Mode: load.Concurrency, Concurrency: 10}) {
		t.Errorf("one process: %+v, %v", sc.initial, err)
	}
}

// TestWaitForStartEndsWithContext: the wait ends with its context (what
// SIGINT ends) or at the start, not before.
func TestWaitForStartEndsWithContext(t *testing.T) {
	t.Parallel()
	w := &WorkersConfig{Count: 2, Index: 0, start: time.Now().Add(time.Hour)}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	var out bytes.Buffer
	if w.waitForStart(ctx, &out) {
		t.Error("the wait outlived its context")
	}
	w.start = time.Now().Add(100 * time.Millisecond)
	began := time.Now()
	if !w.waitForStart(context.Background(), &out) || time.Since(began) < 90*time.Millisecond {
		t.Errorf("the wait ended after %v, before its start", time.Since(began))
	}
}
