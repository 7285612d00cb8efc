package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// SimulatedNote is what every summary, report and comparison says of a run
// against tritontop's own simulator, so that its numbers are never taken
// for a real server's and GPU's.
const SimulatedNote = "server: tritontop simulator (numbers are simulated, not a real GPU)"

// runNotes are the lines that qualify every number of a summary: the
// server was the simulator, and how much of the run the load was paused
// (the rates leave that time out).
func runNotes(s record.Summary) []string {
	var out []string
	if s.Simulated {
		out = append(out, SimulatedNote)
	}
	if n := pausedNote(s.Duration, s.Paused, s.Client.Duration); n != "" {
		out = append(out, n)
	}
	if n := retriesNote(s.Client, s.Retry); n != "" {
		out = append(out, n)
	}
	if n := cancelledNote(s.Client); n != "" {
		out = append(out, n)
	}
	return out
}

// retriesNote says how many sends were retries, which the server served on
// top of the requests counted; with a retry policy (--retries), it says so
// when none was, and why no error could be: their codes are not among the
// policy's. Empty without a retry or a policy.
func retriesNote(c stats.ClientStats, p *record.RetryPolicy) string {
	if c.Retries <= 0 {
		if p == nil {
			return ""
		}
		return "retries: none" + RetryWhyNot(c.ErrorsByCode, p)
	}
	more := ""
	if sends := c.Requests + c.Cancelled; sends > 0 {
		more = fmt.Sprintf(" (%s%% more sends than requests)", fixed(100*float64(c.Retries)/float64(sends), 1))
	}
	return fmt.Sprintf("retries: %d%s; latency is over every attempt of a request, each attempt with its own --timeout", c.Retries, more)
}

// RetryWhyNot says why a run with a retry policy retried no try: no error,
// or errors whose codes the policy does not retry (naming them and the
// flag that would).
func RetryWhyNot(errs []stats.ErrorCount, p *record.RetryPolicy) string {
	if p == nil {
		return ""
	}
	var not []string
	for _, e := range errs {
		if !slices.Contains(p.Codes, e.Code) {
			not = append(not, fmt.Sprintf("%s (%d)", e.Code, e.Count))
		}
	}
	if len(not) == 0 {
		return fmt.Sprintf(" (--retries %d: no try failed with a code it retries)", p.Retries)
	}
	return fmt.Sprintf(" (--retries %d): the errors' codes %s are not among --retry-codes %s; add them to retry those", p.Retries,
		strings.Join(not, ", "), strings.Join(p.Codes, ","))
}

// pausedNote says how long of a span of length total the load was paused
// and over what time its rates are; empty without a pause.
func pausedNote(total, paused, applied time.Duration) string {
	if paused <= 0 {
		return ""
	}
	return fmt.Sprintf("paused %s of %s: throughput is over the %s load was applied",
		paused.Round(time.Millisecond), total.Round(time.Millisecond), applied.Round(time.Millisecond))
}

// SLOMissed reports whether s is a stepped run with an SLO of which no
// measured level met it, and names the SLO ("p99 < 1.00 ms"): the run went
// as asked, but what it was asked to hold did not hold.
func SLOMissed(s record.Summary) (string, bool) {
	sr := s.Search
	if sr == nil || sr.SLO == nil || len(s.Steps) == 0 || (sr.Best >= 0 && sr.Best < len(s.Steps)) {
		return "", false
	}
	// A level the run ended before it was measured (--duration, a stop)
	// neither met nor missed the SLO: with no level measured whole, the
	// run says nothing about it.
	for _, st := range s.Steps {
		if st.Measurement == nil || !st.Measurement.Interrupted {
			return searchSLOName(sr), true
		}
	}
	return "", false
}

// searchSLOName names a search's SLO, or all of its SLOs joined by "and".
func searchSLOName(sr *record.Search) string {
	slo := sloName(sr.SLO)
	if len(sr.SLOs) > 1 {
		names := make([]string, len(sr.SLOs))
		for i := range sr.SLOs {
			names[i] = sloName(&sr.SLOs[i])
		}
		slo = strings.Join(names, " and ")
	}
	return slo
}

// levelSpan names the span of the block of a run at one load level when
// it is not that of the level's step: the block is the whole run, whose
// last ticks, after the load stopped, belong to no step; the CSV row and
// the step table are the level's alone, so their throughput may differ.
// Empty when the two spans are the same.
func levelSpan(s record.Summary) string {
	if len(s.Steps) != 1 || len(s.Models) > 0 {
		return ""
	}
	st := s.Steps[0]
	if st.Ticks <= 0 || st.Ticks >= s.Ticks {
		return ""
	}
	return fmt.Sprintf("whole run: %d ticks, with the %d after the load stopped; the CSV row is the level's %d ticks",
		s.Ticks, s.Ticks-st.Ticks, st.Ticks)
}
