package plan

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
)

// fakePreparer needs a change before the levels whose concurrency is in
// need, records when it was asked, and fails the levels in fail.
type fakePreparer struct {
	f       *fakeRun
	need    []int
	fail    []int
	failed  []int
	pending func(error)
	asked   []int
}

func (p *fakePreparer) Needs(t load.Target) bool { return slices.Contains(p.need, t.Concurrency) }

func (p *fakePreparer) Prepare(t load.Target, done func(error)) {
	if !p.f.state.Paused || p.f.state.InFlight != 0 {
		p.f.t.Errorf("prepare for %s while the load runs: %+v", t, p.f.state)
	}
	p.asked = append(p.asked, t.Concurrency)
	if slices.Contains(p.fail, t.Concurrency) {
		p.failed = append(p.failed, t.Concurrency)
		done(errors.New("refused"))
		return
	}
	p.pending = done
}

// skipSearch is a sweep that leaves out the levels its preparer failed,
// as a search told of a failed level does.
type skipSearch struct {
	Sweep
	p *fakePreparer
}

func (s skipSearch) Next(done []Level) (load.Target, bool) {
	for _, l := range s.Levels {
		measured := slices.ContainsFunc(done, func(d Level) bool { return d.Target == l })
		if !measured && !slices.Contains(s.p.failed, l.Concurrency) {
			return l, true
		}
	}
	return load.Target{}, false
}

// TestStepperPreparesBetweenLevels: a level that needs the server changed
// starts only after the level before was paused, its requests finished and
// the change was made; one whose change fails is replaced by the search's
// next level, and no step is recorded for it.
func TestStepperPreparesBetweenLevels(t *testing.T) {
	p := &fakePreparer{need: []int{2, 3}, fail: []int{2}}
	search := skipSearch{Sweep{Levels: []load.Target{conc(1), conc(2), conc(3)}}, p}
	s, f := newStepper(t, Options{Search: search, Window: time.Second, Prepare: p})
	p.f = f
	for range 3 {
		f.tick(s, 100, 1000, 1)
	}
	if len(f.steps) != 1 {
		t.Fatalf("level 1 not measured: %d steps", len(f.steps))
	}
	f.tick(s, 10, 1000, 1) // the pause begins at this boundary
	if !slices.Contains(f.calls, "pause") {
		t.Fatalf("level 1 not paused: calls %v", f.calls)
	}
	f.tick(s, 1, 1000, 1) // paused, a request still in flight
	if len(p.asked) != 0 {
		t.Fatalf("prepared %v with a request in flight", p.asked)
	}
	f.tick(s, 0, 0, 0) // paused and empty: level 2's change fails, level 3's is asked
	if !slices.Equal(p.asked, []int{2}) {
		t.Fatalf("prepared %v after the drain, want [2]", p.asked)
	}
	f.tick(s, 0, 0, 0) // the failure is heard at this boundary, level 3 prepared
	if !slices.Equal(p.asked, []int{2, 3}) || p.pending == nil || !s.Progress().Preparing {
		t.Fatalf("prepared %v, preparing %v: want level 3 prepared in level 2's place", p.asked, s.Progress().Preparing)
	}
	f.tick(s, 0, 0, 0)
	if !f.state.Paused || f.state.Target.Concurrency != 1 {
		t.Fatalf("the load moved before the change was made: %+v", f.state)
	}
	p.pending(nil)
	f.tick(s, 0, 0, 0) // level 3 starts at this boundary
	if f.state.Paused || f.state.Target != conc(3) || f.state.Step != 1 {
		t.Fatalf("level 3 did not start as step 1 once prepared: %+v, calls %v", f.state, f.calls)
	}
	for range 5 { // a warm-up tick, then three windows
		f.tick(s, 100, 1000, 1)
	}
	f.tick(s, 100, 1000, 1)
	if len(f.steps) != 2 || f.steps[1].Load.Concurrency != 3 || !f.stopped {
		t.Fatalf("steps %d (last %+v), stopped %v: want level 3 measured as the second step", len(f.steps), f.steps[len(f.steps)-1].Load, f.stopped)
	}
}
