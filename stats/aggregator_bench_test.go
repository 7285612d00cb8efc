package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/triton"
)

// benchBatch returns n results with spread latencies, one in fifty failed.
func benchBatch(n int) []driver.Result {
	rng := rand.New(rand.NewPCG(3, 4))
	errUnavailable := &triton.Error{Code: codes.Unavailable, Message: "Exceeds maximum queue size"}
	batch := make([]driver.Result, n)
	for i := range batch {
		sent := time.Duration(i) * time.Millisecond
		batch[i] = ok(sent, time.Duration(200+rng.ExpFloat64()*5000)*time.Microsecond)
		if i%50 == 0 {
			batch[i].Code, batch[i].Err = codes.Unavailable, errUnavailable
		}
	}
	return batch
}

// BenchmarkAggregatorAdd measures the per-result path; ns/op and allocs/op
// are per result.
func BenchmarkAggregatorAdd(b *testing.B) {
	a := NewAggregator(time.Second, 10*time.Second)
	batch := benchBatch(256)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		n := min(len(batch), b.N-i)
		a.Add(batch[:n])
	}
}

// BenchmarkAggregatorAddSplit is the per-result path while a tick boundary
// is set: about half the results go to the next tick.
func BenchmarkAggregatorAddSplit(b *testing.B) {
	a := NewAggregator(time.Second, 10*time.Second)
	batch := benchBatch(256)
	a.Split(batch[len(batch)/2].Done)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		n := min(len(batch), b.N-i)
		a.Add(batch[:n])
	}
}

// BenchmarkSnapshot measures one Tick (tick, window and run summaries and
// the encoded histograms) after 10 and after 10000 ticks of history: the
// cost must not grow with the run's length.
func BenchmarkSnapshot(b *testing.B) {
	for _, history := range []int{10, 10000} {
		// The history is built once: Run calls the function again for
		// every b.N it tries.
		a := NewAggregator(time.Second, 10*time.Second)
		batch := benchBatch(500)
		var s Snapshot
		for range history {
			a.Add(batch)
			if err := a.Tick(time.Second, false, &s); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				a.Add(batch)
				if err := a.Tick(time.Second, false, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAggregatorAddDecoupled is the per-result path of a decoupled
// model's requests with 32 responses each (31 gaps); ns/op is per request.
func BenchmarkAggregatorAddDecoupled(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchmarkAddDecoupled(b, Goodput{}) })
	// With --slo: each request checked against every objective at once.
	b.Run("goodput", func(b *testing.B) {
		benchmarkAddDecoupled(b, Goodput{Latency: time.Second, TTFT: 40 * time.Millisecond, ITL: 8 * time.Millisecond})
	})
}

func benchmarkAddDecoupled(b *testing.B, g Goodput) {
	a := NewAggregator(time.Second, 10*time.Second)
	a.SetGoodput(g)
	rng := rand.New(rand.NewPCG(5, 6))
	batch := make([]driver.Result, 256)
	for i := range batch {
		gaps := make([]time.Duration, 31)
		for j := range gaps {
			gaps[j] = time.Duration(5000+rng.ExpFloat64()*2000) * time.Microsecond
		}
		batch[i] = decoupled(0, time.Duration(20+rng.ExpFloat64()*30)*time.Millisecond, gaps...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		n := min(len(batch), b.N-i)
		a.Add(batch[:n])
	}
}
