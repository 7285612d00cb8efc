package promexport

import (
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// tickSnapshot returns a tick of n successes, encoded as the Collector
// encodes them, with latencies spread from 1 ms to about 1 s (wide) or
// normal around 20 ms with a 2 ms deviation, as a steady model serves.
func tickSnapshot(b *testing.B, n int, wide bool) stats.Snapshot {
	b.Helper()
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		v := int64(20_000 + 2_000*r.NormFloat64())
		if wide {
			// Log-uniform from 1 ms to ~1 s, in µs.
			v = int64(float64(int64(1000)<<r.IntN(10)) * (1 + r.Float64()))
		}
		if err := h.RecordValue(max(v, 1)); err != nil {
			b.Fatal(err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		b.Fatal(err)
	}
	return stats.Snapshot{
		Load: stats.Load{Mode: load.Rate, Rate: 1000, InFlight: 10},
		Tick: stats.ClientStats{
			Requests: int64(n), Successes: int64(n), Inferences: int64(n),
			Latency:   stats.Latency{Count: int64(n), Mean: 100e6},
			Scheduled: &stats.Latency{Count: int64(n), Mean: 100e6},
		},
		Histogram: string(enc), ScheduledHistogram: string(enc),
	}
}

// addCases are the ticks of BenchmarkAdd and BenchmarkAddModels: 1,000 or
// 10,000 requests, with a steady model's narrow latency spread or one over
// three decades (the worst case: the work grows with the number of HDR
// buckets populated).
var addCases = []struct {
	name string
	n    int
	wide bool
}{
	{"1k-narrow", 1_000, false},
	{"10k-narrow", 10_000, false},
	{"10k-wide", 10_000, true},
}

// BenchmarkAdd is the cost of one tick with two histograms (from send and
// from schedule), in a run of one model.
func BenchmarkAdd(b *testing.B) {
	for _, c := range addCases {
		b.Run(c.name, func(b *testing.B) {
			e, err := New(Options{Model: "m", Worker: "0"})
			if err != nil {
				b.Fatal(err)
			}
			s := tickSnapshot(b, c.n, c.wide)
			b.ReportAllocs()
			for b.Loop() {
				e.Add(s)
			}
			if err := e.Err(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkAddModels is the cost of one tick of a run over two models,
// each with a tick of BenchmarkAdd's size: to compare with BenchmarkAdd,
// which is one such model.
func BenchmarkAddModels(b *testing.B) {
	for _, c := range addCases {
		b.Run(c.name, func(b *testing.B) {
			e, err := New(Options{Models: []string{"a", "b"}, Worker: "0"})
			if err != nil {
				b.Fatal(err)
			}
			one := tickSnapshot(b, c.n, c.wide)
			s := one
			for _, name := range []string{"a", "b"} {
				s.Models = append(s.Models, stats.Model{Name: name, Load: one.Load, Tick: one.Tick,
					Histogram: one.Histogram, ScheduledHistogram: one.ScheduledHistogram})
			}
			b.ReportAllocs()
			for b.Loop() {
				e.Add(s)
			}
			if err := e.Err(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkScrape is the cost of one scrape's collection.
func BenchmarkScrape(b *testing.B) {
	e, err := New(Options{Model: "m", Worker: "0"})
	if err != nil {
		b.Fatal(err)
	}
	e.Add(tickSnapshot(b, 10_000, true))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
