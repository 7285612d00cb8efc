package gate

import (
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// Gates are a run's thresholds: those of the whole run (--threshold) and
// each model's own (a --load-file model's thresholds:), checked over the
// run, or over each step as well with PerStep.
type Gates struct {
	Run []Threshold
	// Models maps a model's name to its own thresholds.
	Models  map[string][]Threshold
	PerStep bool
}

// Empty reports whether there is nothing to check.
func (g Gates) Empty() bool {
	if len(g.Run) > 0 {
		return false
	}
	for _, ts := range g.Models {
		if len(ts) > 0 {
			return false
		}
	}
	return true
}

// Evaluate checks the thresholds over a run's summary: the run's over the
// whole run (and each of its steps with PerStep), each model's over that
// model's share of the run (and its steps). A run of one model checks that
// model's thresholds over the whole run.
func (g Gates) Evaluate(s record.Summary) []record.ThresholdResult {
	var out []record.ThresholdResult
	out = append(out, Check(g.Run, "run", OfSummary(s))...)
	if g.PerStep && len(s.Steps) > 1 {
		for _, st := range s.Steps {
			out = append(out, Check(g.Run, "step "+st.Load.String(), OfStep(st))...)
		}
	}
	if len(s.Models) == 0 {
		if ts := g.Models[s.Model]; len(ts) > 0 {
			out = append(out, Check(ts, "model "+s.Model, OfSummary(s))...)
			if g.PerStep && len(s.Steps) > 1 {
				for _, st := range s.Steps {
					out = append(out, Check(ts, "model "+s.Model+" step "+st.Load.String(), OfStep(st))...)
				}
			}
		}
		return out
	}
	for _, m := range s.Models {
		ts := g.Models[m.Name]
		if len(ts) == 0 {
			continue
		}
		out = append(out, Check(ts, "model "+m.Name, Numbers{m.Client, m.Server.ServerStats})...)
		if g.PerStep && len(m.Steps) > 1 {
			for _, st := range m.Steps {
				out = append(out, Check(ts, "model "+m.Name+" step "+st.Load.String(), OfStep(st))...)
			}
		}
	}
	return out
}

// Watcher ends a run early (--abort-on-fail) at the first threshold that
// fails over the sliding window at every tick for a whole window: a
// breach that held that long is no passing spike, and a CI job need not
// wait for the rest of the run. Add is called once per tick on the
// collector's goroutine.
type Watcher struct {
	gates  Gates
	need   int
	streak map[string]int
	fired  bool
	breach func(record.ThresholdResult)
}

// NewWatcher watches g over windows of ticks ticks (at least one), calling
// breach once, with the failing check, when one held that long.
func NewWatcher(g Gates, ticks int, breach func(record.ThresholdResult)) *Watcher {
	return &Watcher{gates: g, need: max(ticks, 1), streak: map[string]int{}, breach: breach}
}

// Add checks one tick's window. Drain ticks, after the load stopped, are
// not the load under test.
func (w *Watcher) Add(s stats.Snapshot) {
	if w.fired || s.Load.Drain {
		return
	}
	w.observe(Check(w.gates.Run, "window", OfWindow(s)))
	for _, m := range s.Models {
		if ts := w.gates.Models[m.Name]; len(ts) > 0 {
			w.observe(Check(ts, "model "+m.Name+" window", Numbers{m.Window, m.Server}))
		}
	}
	if len(s.Models) == 0 {
		// A run of one model: the model's thresholds are the run's.
		for name, ts := range w.gates.Models {
			w.observe(Check(ts, "model "+name+" window", OfWindow(s)))
		}
	}
}

func (w *Watcher) observe(rs []record.ThresholdResult) {
	for _, r := range rs {
		key := r.Scope + "\x00" + r.Threshold
		// A window without the metric yet (no request finished) is not a
		// breach: the run has not measured it.
		if r.Pass || r.Value == nil {
			w.streak[key] = 0
			continue
		}
		w.streak[key]++
		if w.streak[key] >= w.need && !w.fired {
			w.fired = true
			w.breach(r)
		}
	}
}
