package stats

import (
	"fmt"
	"strconv"
	"time"
)

// stepTimes adds up one composing model's queue and compute over ticks,
// weighted by its requests.
type stepTimes struct {
	name        string
	queue, comp float64 // Σ average × count, ns
	n           int64
}

// stepQueueing names the composing model of a pipeline whose queue is the
// longest over ticks (a step of a composing ensemble counts as itself: the
// model whose instances the requests wait for), in a finding that puts its
// queue against the pipeline's whole time in Triton. false when the ticks
// hold no steps, or no step queued.
func stepQueueing(ticks []*ServerStats) (Finding, bool) {
	var acc []stepTimes
	var request float64
	var n int64
	for _, s := range ticks {
		if !s.Pipeline() {
			continue
		}
		request += float64(s.Request) * float64(s.SuccessCount)
		n += s.SuccessCount
		acc = addLeaves(acc, s.Steps)
	}
	best := -1
	var bestQ float64
	for i := range acc {
		if acc[i].n == 0 {
			continue
		}
		if q := acc[i].queue / float64(acc[i].n); best < 0 || q > bestQ {
			best, bestQ = i, q
		}
	}
	if best < 0 || n == 0 || bestQ <= 0 {
		return Finding{}, false
	}
	b := &acc[best]
	q := time.Duration(bestQ)
	c := time.Duration(b.comp / float64(b.n))
	total := time.Duration(request / float64(n))
	return Finding{Verdict: Queueing, Step: b.name,
		Message: fmt.Sprintf("queueing in %s: %s of the %s a request spends in Triton waits in its queue (its compute %s); more load only adds latency",
			b.name, usOrMs(q), usOrMs(total), usOrMs(c))}, true
}

// addLeaves adds each composing model's times among steps, a composing
// ensemble's by its own steps.
func addLeaves(acc []stepTimes, steps []ServerStats) []stepTimes {
	for i := range steps {
		st := &steps[i]
		if !st.Available || st.Reset {
			continue
		}
		if st.Pipeline() {
			acc = addLeaves(acc, st.Steps)
			continue
		}
		k := -1
		for j := range acc {
			if acc[j].name == st.Model {
				k = j
				break
			}
		}
		if k < 0 {
			acc = append(acc, stepTimes{name: st.Model})
			k = len(acc) - 1
		}
		n := float64(st.SuccessCount)
		acc[k].queue += float64(st.Queue) * n
		acc[k].comp += float64(st.Compute()) * n
		acc[k].n += st.SuccessCount
	}
	return acc
}

// usOrMs is a duration in whole microseconds under a millisecond, else
// in milliseconds as ms writes them.
func usOrMs(d time.Duration) string {
	if d < time.Millisecond {
		return strconv.FormatInt(d.Microseconds(), 10) + " µs"
	}
	return ms(d)
}
