package driver

import (
	"context"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

func TestEpochIsKnownBeforeRun(t *testing.T) {
	before := time.Now()
	d, err := New(Options{
		Client:   &nopClient{delay: time.Millisecond},
		Requests: []*triton.InferRequest{{}},
		Load:     load.Target{Mode: load.Concurrency, Concurrency: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	epoch := d.Epoch()
	if epoch.Before(before) || epoch.After(time.Now()) {
		t.Fatalf("Epoch %v is not the driver's creation (after %v)", epoch, before)
	}
	// Run starts well after New: results count from the epoch.
	const idle = 200 * time.Millisecond
	time.Sleep(idle)
	var first, last time.Duration = -1, 0
	results := make(chan struct{})
	go func() {
		defer close(results)
		for b := range d.Results() {
			for _, r := range b {
				if first < 0 || r.Sent < first {
					first = r.Sent
				}
				last = max(last, r.Done)
			}
		}
	}()
	runAt := time.Since(epoch)
	time.AfterFunc(300*time.Millisecond, func() { d.Stop(time.Second) })
	if err := d.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-results
	if d.Epoch() != epoch {
		t.Fatal("Epoch changed during Run")
	}
	if first < runAt {
		t.Fatalf("first send at %v from the epoch, before Run began at %v", first, runAt)
	}
	if sending := last - runAt; sending < 250*time.Millisecond {
		t.Fatalf("requests were sent for %v of a 300ms run", sending)
	}
}
