package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// avgSplit is the client's average latency beside Triton's request time
// over the ticks the diagnosis reads (the latest ticks at this load, up to
// stats.DiagnoseTicks of them): the latency pane's "avg" line and the
// footer's time-outside-Triton finding are then one quantity over one span,
// and show the same value. It is worked out when ticks arrive, not per
// frame.
type avgSplit struct {
	// client is the average client latency (from the actual send) over
	// the ticks with successful requests; ok when there are any.
	client time.Duration
	ok     bool
	// server is Triton's average request time, weighted as client, over
	// the ticks that have both; split when there are any, and client is
	// then over those ticks only.
	server time.Duration
	split  bool
	// span names the ticks read: "last 5 s", "last 2 s at this load";
	// short is the same in fewer cells: "5 s"; tag is " · "+span, made
	// with the rest so that a frame does not build it.
	span, short, tag string
}

// spanName names a span of ticks by the time they cover: "last 5 s", and
// "last 2 s at this load" where a change of load cut it short.
func spanName(ticks []stats.Snapshot, cut bool) string {
	name := "last " + spanShort(ticks)
	if cut {
		name += " at this load"
	}
	return name
}

// spanShort is the time ticks cover, briefly: "5 s".
func spanShort(ticks []stats.Snapshot) string {
	var d time.Duration
	for i := range ticks {
		d += ticks[i].Interval
	}
	return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
}

// splitOver is the client latency and Triton's request time over ticks,
// weighted by each tick's successful requests, as stats.Diagnose weighs
// them for its time-outside-Triton finding.
func splitOver(tail []stats.Snapshot, cut bool) avgSplit {
	a := avgSplit{span: spanName(tail, cut), short: spanShort(tail)}
	a.tag = " · " + a.span
	var all, client, server time.Duration
	var n, k int64
	for i := range tail {
		s := &tail[i]
		c := s.Tick.Latency.Count
		if c == 0 {
			continue
		}
		all += s.Tick.Latency.Mean * time.Duration(c)
		n += c
		if serverMeasured(s) {
			client += s.Tick.Latency.Mean * time.Duration(c)
			server += s.Server.Request * time.Duration(c)
			k += c
		}
	}
	switch {
	case k > 0:
		a.client, a.server, a.ok, a.split = client/time.Duration(k), server/time.Duration(k), true, true
	case n > 0:
		a.client, a.ok = all/time.Duration(n), true
	}
	return a
}

// findingSpans names, for each finding, the ticks it was read over, in the
// words the panes use for theirs, so that a footer figure and a pane
// figure over different spans are visibly different quantities. The last
// tick's verdicts say so in their message and get no name.
func findingSpans(findings []stats.Finding, recent []stats.Snapshot) []string {
	if len(findings) == 0 {
		return nil
	}
	tail, cut := stats.DiagnosisTail(recent)
	base := spanName(tail, cut)
	out := make([]string, len(findings))
	for i, f := range findings {
		switch f.Verdict {
		case stats.Unreachable, stats.Stalled:
		case stats.Queueing:
			out[i] = queueSpan(recent, strings.HasPrefix(f.Message, "server saturated"))
		default:
			out[i] = base
		}
	}
	return out
}

// queueSpan is the span of the queueing verdict: the last
// stats.DiagnoseTicks ticks with server statistics, or all of recent's when
// it compares the queue before and after (saturated).
func queueSpan(recent []stats.Snapshot, all bool) string {
	var d time.Duration
	n := 0
	for i := len(recent) - 1; i >= 0 && (all || n < stats.DiagnoseTicks); i-- {
		if s := &recent[i].Server; s.Available && !s.Reset && s.SuccessCount > 0 {
			d += recent[i].Interval
			n++
		}
	}
	return "last " + strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
}
