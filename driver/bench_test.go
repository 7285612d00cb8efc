package driver

import (
	"context"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// benchDriver runs a closed loop against client until b.N results arrived
// and reports the driver's own cost per request.
func benchDriver(b *testing.B, client Client, opts Options) {
	opts.Client = client
	opts.Requests = []*triton.InferRequest{{Model: "identity"}}
	d, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	b.ReportAllocs()
	b.ResetTimer()
	go func() { done <- d.Run(ctx) }()
	n := 0
	for batch := range d.Results() {
		n += len(batch)
		if n >= b.N {
			d.Stop(time.Second)
			break
		}
	}
	b.StopTimer()
	for range d.Results() {
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkClosedLoopNop measures what the driver adds per request in
// closed loop: the client answers at once, so everything counted is the
// driver's (result batching, in-flight counting, time stamps).
func BenchmarkClosedLoopNop(b *testing.B) {
	benchDriver(b, &nopClient{}, Options{Load: load.Target{Mode: load.Concurrency, Concurrency: 4}})
}

// BenchmarkClosedLoopNopTimeout is the same with a per-request timeout,
// which costs a context.WithTimeout per request.
func BenchmarkClosedLoopNopTimeout(b *testing.B) {
	benchDriver(b, &nopClient{}, Options{Load: load.Target{Mode: load.Concurrency, Concurrency: 4}, Timeout: time.Second})
}

// BenchmarkContextWithTimeout is the cost a per-request timeout adds.
func BenchmarkContextWithTimeout(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for range b.N {
		c, cancel := context.WithTimeout(ctx, time.Second)
		_ = c
		cancel()
	}
}

// BenchmarkStreamingNop measures the streaming path's own cost: id
// formatting, the send lock of a shared stream, and matching responses to
// workers.
func BenchmarkStreamingNop(b *testing.B) {
	benchDriver(b, &nopClient{}, Options{Load: load.Target{Mode: load.Concurrency, Concurrency: 8}, Streaming: true, Streams: 2})
}

// BenchmarkOpenLoopNop measures the open-loop path: the pacer handing
// tickets to workers at a rate far above what it can reach, so that it
// never sleeps.
func BenchmarkOpenLoopNop(b *testing.B) {
	benchDriver(b, &nopClient{}, Options{Load: load.Target{Mode: load.Rate, Rate: 1e9}})
}

// BenchmarkStreamingDecoupledNop measures the decoupled path's own cost: a
// request answered at once with 16 responses, each timed by the receiver.
// ns/op is per request.
func BenchmarkStreamingDecoupledNop(b *testing.B) {
	benchDriver(b, &nopClient{responses: 16}, Options{Load: load.Target{Mode: load.Concurrency, Concurrency: 8},
		Streaming: true, Streams: 2, Decoupled: true})
}

// BenchmarkClosedLoopSequencesNop is BenchmarkClosedLoopNop for a stateful
// model: every request picks its place in its worker's sequence, and every
// 20th or so starts a new one (an id, a length, its prepared variants).
func BenchmarkClosedLoopSequencesNop(b *testing.B) {
	benchDriver(b, &nopSeqClient{}, Options{Load: load.Target{Mode: load.Concurrency, Concurrency: 4},
		Sequences: &SequenceOptions{Length: 20, Variation: 20}})
}

// BenchmarkOpenLoopSequencesNop is BenchmarkOpenLoopNop over 4 shared
// sequences, each request taking one at random under its lock.
func BenchmarkOpenLoopSequencesNop(b *testing.B) {
	benchDriver(b, &nopSeqClient{}, Options{Load: load.Target{Mode: load.Rate, Rate: 1e9},
		Sequences: &SequenceOptions{Length: 20, Variation: 20}})
}
