package session

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// runGates are a run's thresholds at work: checked into the summary at the
// end, watched tick by tick with --abort-on-fail, written as JUnit.
type runGates struct {
	flags *GatesConfig
	// end ends the run; set before the collector starts, read on its
	// goroutine.
	end     func()
	mu      sync.Mutex
	breach  *record.ThresholdResult
	watcher *gate.Watcher
}

// newRunGates are f's gates, nil when the run has no threshold and
// writes no job summary.
func newRunGates(f *Config) *runGates {
	if f.Gates.gates.Empty() && f.Gates.StepSummary == "" {
		return nil
	}
	g := &runGates{flags: &f.Gates}
	if f.Gates.AbortOnFail {
		// The breach must hold at every tick for the length of the
		// sliding window.
		ticks := int((f.Window + f.Tick - 1) / f.Tick)
		g.watcher = gate.NewWatcher(f.Gates.gates, ticks, g.aborted)
	}
	return g
}

// sink is the --abort-on-fail watcher, nil without one.
func (g *runGates) sink() report.Sink {
	if g == nil || g.watcher == nil {
		return nil
	}
	return g.watcher
}

// aborted records the breach and ends the run.
func (g *runGates) aborted(r record.ThresholdResult) {
	g.mu.Lock()
	g.breach = &r
	g.mu.Unlock()
	if g.end != nil {
		g.end()
	}
}

// finish checks the thresholds over the summary, for the run file and the
// printed summary.
func (g *runGates) finish(sum *record.Summary) {
	if !g.flags.gates.Empty() {
		sum.Thresholds = g.flags.gates.Evaluate(*sum)
	}
}

// verdict writes --junit and says whether the run held its thresholds: nil,
// or an sloError naming what failed.
func (g *runGates) verdict(sum record.Summary, suite string) error {
	if g == nil {
		return nil
	}
	if g.flags.StepSummary != "" {
		if err := outfile.AppendStepSummary(g.flags.StepSummary, func(w io.Writer) error { return report.WriteMarkdown(w, sum) }); err != nil {
			return err
		}
	}
	if g.flags.JUnit != "" {
		js := gate.ThresholdSuite(suite, sum.Thresholds, sum.Duration)
		js.Properties = [][2]string{{"model", sum.Model}, {"server", sum.URL}, {"protocol", sum.Protocol}, {"load", sum.Load.String()}}
		if err := gate.WriteJUnitFile(g.flags.JUnit, js); err != nil {
			return err
		}
	}
	failed := gate.Failed(sum.Thresholds)
	g.mu.Lock()
	breach := g.breach
	g.mu.Unlock()
	var msg []string
	if breach != nil {
		msg = append(msg, fmt.Sprintf("--abort-on-fail ended the run: %s", gate.Describe(*breach)))
	}
	if len(failed) > 0 {
		parts := make([]string, len(failed))
		for i, r := range failed {
			parts[i] = gate.Describe(r)
		}
		msg = append(msg, fmt.Sprintf("%d of %d threshold checks failed: %s", len(failed), len(sum.Thresholds), strings.Join(parts, "; ")))
	}
	if len(msg) == 0 {
		return nil
	}
	return gate.Failure{Err: fmt.Errorf("%s", strings.Join(msg, "; "))}
}
