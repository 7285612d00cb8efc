package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/record"
)

// TuneConfigText is a tune run's configuration in a few words: "2 inst ·
// batch 16 · delay 500µs", with " · pref half" for half a batch preferred.
func TuneConfigText(c record.TuneConfig) string {
	s := fmt.Sprintf("%d inst · batch %d", c.Instances, c.MaxBatchSize)
	if c.MaxBatchSize > 1 {
		s += fmt.Sprintf(" · delay %dµs", c.QueueDelayUS)
		if c.Preferred == "half" {
			s += " · pref half"
		}
	}
	return s
}

// WriteTune writes what tritontop tune found: the search in a line, the
// best configuration against the original, every trial, and the frontier
// of throughput against p99 latency.
func WriteTune(w io.Writer, t *record.Tune) {
	fmt.Fprintf(w, "\nTune: objective %s under %s: %d trials over %d configurations (%s of the grid's %d points) in %s; %s\n",
		t.Objective, strings.Join(t.SLOs, " and "), len(t.Trials), t.Configurations,
		pctOf(len(t.Trials), t.Grid.Points), t.Grid.Points, t.Elapsed.Round(time.Second), t.Stopped)
	switch {
	case t.Best < 0 || t.Best >= len(t.Trials):
		fmt.Fprintln(w, "  no configuration met the SLO at any load measured")
	default:
		b := t.Trials[t.Best]
		fmt.Fprintf(w, "  best:     %s at concurrency %d: %.1f infer/s, p99 %s\n", TuneConfigText(b.Config), b.Concurrency, b.Throughput, ms(b.P99))
		if t.Baseline >= 0 && t.Baseline < len(t.Trials) {
			o := t.Trials[t.Baseline]
			fmt.Fprintf(w, "  original: %s at concurrency %d: %.1f infer/s, p99 %s%s\n", TuneConfigText(o.Config), o.Concurrency, o.Throughput, ms(o.P99), passNote(o))
		}
		if t.Output != "" {
			fmt.Fprintf(w, "  config.pbtxt: %s\n", textsafe.Line(t.Output))
		}
	}
	switch {
	case t.RestoreError != "":
		fmt.Fprintf(w, "  the original configuration could NOT be loaded back: %s\n", textsafe.Line(t.RestoreError))
	case t.Restored:
		fmt.Fprintln(w, "  the original configuration was loaded back")
	}
	writeTuneTrials(w, t)
	writeTuneFrontier(w, t)
}

// passNote says a trial missed the SLO.
func passNote(t record.TuneTrial) string {
	if t.Pass {
		return ""
	}
	return " (missed the SLO)"
}

func pctOf(n, of int) string {
	if of <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// writeTuneTrials is the table of every trial.
func writeTuneTrials(w io.Writer, t *record.Tune) {
	fmt.Fprintf(w, "\n  %3s  %-44s %6s %11s %10s %8s  %s\n", "#", "configuration", "conc", "infer/s", "p99", "time", "SLO")
	for i, tr := range t.Trials {
		mark := " "
		if i == t.Best {
			mark = "*"
		}
		verdict := "pass"
		switch {
		case tr.LoadError != "":
			fmt.Fprintf(w, " %s%3d  %-44s %6d  not loaded: %s\n", mark, i+1, TuneConfigText(tr.Config), tr.Concurrency, textsafe.Excerpt(tr.LoadError, 120))
			continue
		case !tr.Stable:
			verdict = "unstable"
		case !tr.Pass:
			verdict = "miss"
		}
		fmt.Fprintf(w, " %s%3d  %-44s %6d %11.1f %10s %8s  %s\n", mark, i+1, TuneConfigText(tr.Config), tr.Concurrency, tr.Throughput,
			ms(tr.P99), tr.Elapsed.Round(100*time.Millisecond), verdict)
	}
}

// writeTuneFrontier lists the frontier: the most throughput each p99
// buys.
func writeTuneFrontier(w io.Writer, t *record.Tune) {
	if len(t.Frontier) == 0 {
		return
	}
	fmt.Fprintln(w, "\n  frontier (the most throughput at each p99 measured):")
	for _, i := range t.Frontier {
		if i < 0 || i >= len(t.Trials) {
			continue
		}
		tr := t.Trials[i]
		slo := ""
		if !tr.Pass {
			slo = "  (misses the SLO)"
		}
		fmt.Fprintf(w, "    p99 %10s  %11.1f infer/s  %s at concurrency %d%s\n", ms(tr.P99), tr.Throughput, TuneConfigText(tr.Config), tr.Concurrency, slo)
	}
}
