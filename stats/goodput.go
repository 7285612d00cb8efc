package stats

import (
	"time"

	"github.com/tritontop/tritontop/driver"
)

// Goodput is what a request to a decoupled model (an LLM) must meet, all
// at once, to count as good, as genai-perf's and AIPerf's --goodput count
// it: its own latency, its time to first response and its mean time
// between responses, each at most its threshold (0: not asked). Latency
// and time to first response are from the request's scheduled send,
// which is its send in closed loop.
type Goodput struct {
	Latency, TTFT, ITL time.Duration
}

// On reports whether any objective is set.
func (g Goodput) On() bool { return g.Latency > 0 || g.TTFT > 0 || g.ITL > 0 }

// GoodputStats counts the requests of a span that met every objective of
// Goodput at once; PerS is Requests over the span's duration.
type GoodputStats struct {
	Requests int64   `json:"requests"`
	PerS     float64 `json:"per_s"`
}

// SetGoodput makes the aggregator count the successful requests that meet
// g (StreamingStats.Goodput). Call it before the first Add.
func (a *Aggregator) SetGoodput(g Goodput) {
	if !g.On() {
		return
	}
	for _, sp := range []*span{a.cur, a.next} {
		sp.goodput = &g
	}
}

// met reports whether a successful result meets every objective. A
// request whose responses were not timed cannot meet one on them.
func (g *Goodput) met(r *driver.Result) bool {
	if g.Latency > 0 && r.Done-r.Scheduled > g.Latency {
		return false
	}
	if g.TTFT <= 0 && g.ITL <= 0 {
		return true
	}
	t := r.Timing
	if t == nil || t.First == 0 && len(t.Gaps) == 0 {
		return false
	}
	if g.TTFT > 0 && t.First-r.Scheduled > g.TTFT {
		return false
	}
	if g.ITL > 0 && len(t.Gaps) > 0 {
		var sum time.Duration
		for _, d := range t.Gaps {
			sum += d
		}
		if sum/time.Duration(len(t.Gaps)) > g.ITL {
			return false
		}
	}
	return true
}

// addGoodput adds o's good requests to s's (nil: none counted).
func addGoodput(s **GoodputStats, o *GoodputStats) {
	if o == nil {
		return
	}
	if *s == nil {
		*s = &GoodputStats{}
	}
	(*s).Requests += o.Requests
}

// goodputStats is a span's count of good requests over duration d; nil
// when no objective was set.
func goodputStats(on bool, good int64, d time.Duration) *GoodputStats {
	if !on {
		return nil
	}
	g := &GoodputStats{Requests: good}
	if secs := d.Seconds(); secs > 0 {
		g.PerS = float64(good) / secs
	}
	return g
}
