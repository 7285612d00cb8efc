package report

import (
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// The diagnosis names its span: each finding of stats.Diagnose is read over
// some of the recent ticks, and where it is shown (the headless progress
// line, the summaries, the HTML report) it says over which, in the words of
// the dashboard's panes: "last 5 s", "last 2 s at this load". A verdict of
// the last tick alone (unreachable, stalled) says so in its message.

// StepDiagnosisSpan names the span of a step's diagnosis, read over the
// last ticks of the step as it ended.
const StepDiagnosisSpan = "at the step's end"

// DiagnosisSpans names, for each of findings (stats.Diagnose(recent)), the
// ticks it was read over: the last stats.DiagnoseTicks ticks at the last
// tick's load level for most verdicts, the last ticks with server
// statistics for queueing (all of recent's when it compares the queue
// before and after), and "" for the last tick's verdicts. ofLoad words
// them for a summary, which reads the last ticks under load: "last 5 s of
// load", "last 2 s of load, at its last level", "last tick of load".
func DiagnosisSpans(findings []stats.Finding, recent []stats.Snapshot, ofLoad bool) []string {
	if len(findings) == 0 {
		return nil
	}
	if len(recent) > 2*stats.DiagnoseTicks {
		recent = recent[len(recent)-2*stats.DiagnoseTicks:]
	}
	tail, cut := stats.DiagnosisTail(recent)
	out := make([]string, len(findings))
	for i, f := range findings {
		switch f.Verdict {
		case stats.Unreachable, stats.Stalled:
			if ofLoad {
				out[i] = "last tick of load"
			}
		case stats.Queueing:
			out[i] = spanWords(serverTicksTime(recent, strings.HasPrefix(f.Message, "server saturated")), false, ofLoad)
		default:
			out[i] = spanWords(ticksTime(tail), cut, ofLoad)
		}
	}
	return out
}

// ticksTime is the time ticks cover.
func ticksTime(ticks []stats.Snapshot) time.Duration {
	var d time.Duration
	for i := range ticks {
		d += ticks[i].Interval
	}
	return d
}

// serverTicksTime is the time covered by the last stats.DiagnoseTicks
// ticks of recent with server statistics, or by all of them.
func serverTicksTime(recent []stats.Snapshot, all bool) time.Duration {
	var d time.Duration
	n := 0
	for i := len(recent) - 1; i >= 0 && (all || n < stats.DiagnoseTicks); i-- {
		if s := &recent[i].Server; s.Available && !s.Reset && s.SuccessCount > 0 {
			d += recent[i].Interval
			n++
		}
	}
	return d
}

// spanWords is a span of d: "last 5 s", "last 2 s at this load" (cut by a
// change of load), or for a summary "last 5 s of load", "last 2 s of load,
// at its last level".
func spanWords(d time.Duration, cut, ofLoad bool) string {
	w := "last " + strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
	switch {
	case ofLoad && cut:
		return w + " of load, at its last level"
	case ofLoad:
		return w + " of load"
	case cut:
		return w + " at this load"
	}
	return w
}

// findingSpan is the i-th span of spans, "" where there is none.
func findingSpan(spans []string, i int) string {
	if i < len(spans) {
		return spans[i]
	}
	return ""
}

// namedFindings are findings with their spans at the end of the message
// (" · last 5 s"), for a view that shows messages alone.
func namedFindings(fs []stats.Finding, spans []string) []stats.Finding {
	if len(spans) == 0 {
		return fs
	}
	out := make([]stats.Finding, len(fs))
	for i, f := range fs {
		if s := findingSpan(spans, i); s != "" {
			f.Message += " · " + s
		}
		out[i] = f
	}
	return out
}

// diagnoseNamed is the summary's diagnosis up to tick seq, with the span of
// each finding.
func (z *Summarizer) diagnoseNamed(seq int) ([]stats.Finding, []string) {
	var upTo []stats.Snapshot
	for _, s := range z.recent {
		if s.Seq <= seq && !s.Load.Drain {
			upTo = append(upTo, s)
		}
	}
	fs := stats.Diagnose(upTo, z.diagOpts())
	return fs, DiagnosisSpans(fs, upTo, true)
}
