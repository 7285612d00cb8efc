package plan

import (
	"fmt"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/stats/statstest"
)

// fakeRun is a driver and a collector's tick boundary in one: it holds the
// load state that ticks are labelled with, and runs the stepper's
// boundary functions when the test ends a tick. Like the collector, it
// ends the tick under way at a change of load made between boundaries: the
// next tick the test ends is preceded by that short tick, labelled with
// the load before the change.
type fakeRun struct {
	t       *testing.T
	state   load.State
	hooks   []func()
	calls   []string
	stopped bool
	seq     int
	steps   []record.Step
	// inHook is set while boundary functions run; cut is the load before
	// the first change made outside them since the last tick.
	inHook bool
	cut    *load.State
	// cuts counts the short ticks emitted.
	cuts int
}

// changing notes a change of load: one made outside a boundary ends a
// short tick.
func (f *fakeRun) changing() {
	if !f.inHook && f.cut == nil {
		st := f.state
		f.cut = &st
	}
}

func (f *fakeRun) SetStep(i int, l load.Target) {
	f.changing()
	f.state.Step, f.state.Target = i, l
	f.calls = append(f.calls, fmt.Sprintf("step %d %s", i, l))
}
func (f *fakeRun) Pause() { f.changing(); f.state.Paused = true; f.calls = append(f.calls, "pause") }
func (f *fakeRun) Resume() {
	f.changing()
	f.state.Paused = false
	f.calls = append(f.calls, "resume")
}
func (f *fakeRun) Stop(time.Duration) {
	f.changing()
	f.stopped = true
	f.calls = append(f.calls, "stop")
}
func (f *fakeRun) AtNextTick(fn func())  { f.hooks = append(f.hooks, fn) }
func (f *fakeRun) onStep(st record.Step) { f.steps = append(f.steps, st) }

// tick ends one tick at the current load, n requests at us µs each, with
// inFlight left at its end, as the collector does: first the short tick a
// change between boundaries ended, if any (nothing finished in it); at the
// boundary it runs the functions waiting for it (they set the next tick's
// load), then it emits the tick that ended there.
func (f *fakeRun) tick(s *Stepper, n int, us int64, inFlight int) {
	f.t.Helper()
	if f.cut != nil {
		f.seq++
		f.cuts++
		short := stats.Snapshot{Seq: f.seq, Interval: 10 * time.Millisecond, Tick: stats.ClientStats{Duration: 10 * time.Millisecond}}
		short.Load = stats.LoadOf(*f.cut)
		f.cut = nil
		s.Add(short)
	}
	f.seq++
	snap := stats.Snapshot{Seq: f.seq, Interval: time.Second, Tick: stats.ClientStats{Duration: time.Second}}
	if n > 0 {
		snap = statstest.Tick(f.t, f.seq, f.state.Target.Concurrency, n, us, [5]int64{us, 0, 0, us, 0})
	}
	snap.Load = stats.LoadOf(f.state)
	snap.Load.InFlight = inFlight
	hooks := f.hooks
	f.hooks = nil
	f.inHook = true
	for _, h := range hooks {
		h()
	}
	f.inHook = false
	s.Add(snap)
}

func newStepper(t *testing.T, o Options) (*Stepper, *fakeRun) {
	t.Helper()
	f := &fakeRun{t: t}
	o.Tick = time.Second
	o.OnStep = f.onStep
	s, err := NewStepper(o, f, f)
	if err != nil {
		t.Fatal(err)
	}
	f.state.Target = s.First()
	return s, f
}

func TestStepperMeasuresUntilStable(t *testing.T) {
	s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{conc(1), conc(2)}}, Window: 2 * time.Second})
	// Level 1: a slow first window (warm-up), then three that agree.
	for _, n := range []int{50, 50, 100, 100, 100, 101, 100, 99} {
		f.tick(s, n, 1000, 1)
	}
	if len(f.steps) != 1 {
		t.Fatalf("%d steps after level 1's windows", len(f.steps))
	}
	st := f.steps[0]
	m := st.Measurement
	if !m.Stable || m.Windows != 3 || m.Trials != 4 || m.WarmupTicks != 2 || m.WindowTicks != 2 || st.Ticks != 6 {
		t.Errorf("measurement %+v over %d ticks: want stable in 3 windows of 2 ticks after 2 warm-up ticks", m, st.Ticks)
	}
	if st.Client.InferPerS != 100 {
		t.Errorf("step throughput %v, want the measured windows' 100/s without the warm-up", st.Client.InferPerS)
	}
	// The next level starts at once: the short tick that the change ends
	// is at the old level and is no part of any step.
	if f.state.Step != 1 || f.state.Target != conc(2) || len(f.steps) != 1 {
		t.Fatalf("after level 1: state %+v, calls %v", f.state, f.calls)
	}
	// Level 2 never settles: max trials, reported unstable.
	for i := range 2 * DefaultMaxTrials {
		f.tick(s, 100+50*(i%4/2), 2000, 2)
	}
	if len(f.steps) != 2 || f.cuts != 1 {
		t.Fatalf("%d steps, %d short ticks", len(f.steps), f.cuts)
	}
	// Its ticks are the 20 after the short one (tick 9): its last three
	// windows are kept, the rest counted as warm-up.
	if st := f.steps[1]; st.Measurement.WarmupTicks+st.Ticks != 2*DefaultMaxTrials || st.LastSeq != 29 {
		t.Errorf("level 2: %d ticks and %d warm-up to tick %d; want %d to tick 29", st.Ticks,
			st.Measurement.WarmupTicks, st.LastSeq, 2*DefaultMaxTrials)
	}
	if m := f.steps[1].Measurement; m.Stable || m.Trials != DefaultMaxTrials || m.Index != 1 {
		t.Errorf("level 2 measurement %+v: want unstable after %d trials", m, DefaultMaxTrials)
	}
	if !f.stopped || !s.Progress().Done {
		t.Errorf("the run did not stop after its last level: %v", f.calls)
	}
	r := s.Result()
	if r.Mode != "sweep" || r.Best != -1 || r.MaxThroughput < 100 {
		t.Errorf("result %+v", r)
	}
}

func TestStepperFixedStepsChangeOnTheBoundary(t *testing.T) {
	s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{conc(1), conc(2), conc(3)}},
		StepDuration: 3 * time.Second})
	for level := 1; level <= 3; level++ {
		for range 3 {
			if got := f.state.Target.Concurrency; got != level {
				t.Fatalf("tick %d ran at concurrency %d, want %d: %v", f.seq+1, got, level, f.calls)
			}
			f.tick(s, 100*level, 1000, level)
		}
	}
	if len(f.steps) != 3 || !f.stopped {
		t.Fatalf("%d steps, stopped %v", len(f.steps), f.stopped)
	}
	for i, st := range f.steps {
		if m := st.Measurement; !m.Fixed || !m.Stable || st.Ticks != 3 || st.FirstSeq != 3*i+1 {
			t.Errorf("step %d: %+v, %d ticks from %d", i+1, m, st.Ticks, st.FirstSeq)
		}
	}
}

func TestStepperEndsALevelFarPastTheSLO(t *testing.T) {
	slo := &SLO{Percentile: 99, Threshold: 10 * time.Millisecond}
	s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{conc(1), conc(2)}, StopAtSLO: true},
		Window: time.Second, SLO: slo})
	for range 3 {
		f.tick(s, 100, 5000, 1)
	}
	if len(f.steps) != 1 || !f.steps[0].Measurement.SLO.Pass {
		t.Fatalf("level 1 at 5 ms: steps %+v", f.steps)
	}
	f.tick(s, 100, 30000, 2)
	if len(f.steps) != 2 {
		t.Fatalf("a window at 30 ms, three times the 10 ms SLO, did not end the level")
	}
	c := f.steps[1].Measurement.SLO
	if c.Pass || c.Latency != 30*time.Millisecond || c.Goodput != 0 {
		t.Errorf("SLO check %+v", c)
	}
	if !f.stopped || s.Result().Best != 0 {
		t.Errorf("linear search did not stop at the first failing level with level 1 best: %+v", s.Result())
	}
}

// TestStepperMeasuresAProbeWhateverItsLatency: a capacity search's
// closed-loop probe measures throughput at saturation, where latency is far
// past any SLO; no early end cuts it to one window.
func TestStepperMeasuresAProbeWhateverItsLatency(t *testing.T) {
	slo := &SLO{Percentile: 99, Threshold: 10 * time.Millisecond}
	s, f := newStepper(t, Options{Search: &Capacity{Concurrency: 8, Base: load.Target{Mode: load.Rate}},
		Window: time.Second, SLO: slo})
	// A warm-up tick, then windows at 30 ms: three times the SLO.
	for _, n := range []int{60, 100, 100, 100} {
		f.tick(s, n, 30000, 8)
	}
	if len(f.steps) != 1 {
		t.Fatalf("%d steps after the probe's windows agreed; calls %v", len(f.steps), f.calls)
	}
	if m := f.steps[0].Measurement; !m.Stable || m.Windows != 3 || m.SLO == nil || m.SLO.Pass {
		t.Errorf("probe measurement %+v: want stable over 3 windows, failing the SLO", m)
	}
}

func TestStepperPauseAndInterrupt(t *testing.T) {
	s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{conc(1), conc(2)}}, Window: 2 * time.Second})
	f.tick(s, 100, 1000, 1)
	f.state.Paused = true
	f.tick(s, 40, 1000, 1) // paused: the half-filled window is dropped
	f.state.Paused = false
	f.tick(s, 100, 1000, 1)
	s.Interrupt()
	if len(f.steps) != 1 {
		t.Fatal("interrupted level lost")
	}
	st := f.steps[0]
	if m := st.Measurement; !m.Interrupted || m.Stable || st.Ticks != 1 || st.FirstSeq != 3 {
		t.Errorf("interrupted step %+v over ticks %d..%d", m, st.FirstSeq, st.LastSeq)
	}
}

func TestStepperSettlesAfterAnOpenLoop(t *testing.T) {
	rate := func(r float64) load.Target { return load.Target{Mode: load.Rate, Rate: r} }
	s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{rate(100), rate(50)}},
		StepDuration: 2 * time.Second, Drain: 10 * time.Second})
	f.tick(s, 100, 1000, 3)
	f.tick(s, 100, 1000, 400) // past capacity: 400 left in flight
	if !f.state.Paused || f.state.Step != 0 {
		t.Fatalf("not paused for the backlog: %v", f.calls)
	}
	f.tick(s, 300, 1000, 100) // paused, draining
	if !f.state.Paused || f.state.Step != 0 {
		t.Fatalf("next level started with 100 still in flight: %v", f.calls)
	}
	f.tick(s, 100, 1000, 0) // drained: the next level starts at once
	if f.state.Paused || f.state.Step != 1 || f.state.Target != rate(50) {
		t.Errorf("after the drain: %+v, calls %v", f.state, f.calls)
	}
	// Its first tick, after the short paused one, is the ramp: warm-up.
	f.tick(s, 20, 1000, 5)
	f.tick(s, 50, 1000, 5)
	f.tick(s, 50, 1000, 5)
	if len(f.steps) != 2 || f.steps[1].Measurement.WarmupTicks != 1 || f.steps[1].Ticks != 2 {
		t.Errorf("level 2: %d steps, %+v", len(f.steps), f.steps[len(f.steps)-1].Measurement)
	}
	want := []string{"pause", "step 1 rate 50/s", "resume", "stop"}
	if fmt.Sprint(f.calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v", f.calls, want)
	}
}

// In lockstep, an open-loop level pauses for the drain time in whole ticks,
// whatever is still in flight, so that every process running the schedule
// resumes on the same tick.
func TestStepperLockstepSettlesByTicks(t *testing.T) {
	rate := func(r float64) load.Target { return load.Target{Mode: load.Rate, Rate: r} }
	for _, inFlight := range []int{0, 400} {
		s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{rate(100), rate(50)}},
			StepDuration: 2 * time.Second, Drain: 2500 * time.Millisecond, Lockstep: true})
		f.tick(s, 100, 1000, 3)
		f.tick(s, 100, 1000, inFlight) // the level's last tick
		f.tick(s, 100, 1000, inFlight) // paused at its end
		for i := range 3 {             // 2.5 s of drain: three paused ticks
			if !f.state.Paused || f.state.Step != 0 {
				t.Fatalf("in flight %d: paused tick %d: %+v, calls %v", inFlight, i+1, f.state, f.calls)
			}
			f.tick(s, 0, 0, 0)
		}
		if f.state.Paused || f.state.Step != 1 {
			t.Errorf("in flight %d: after three paused ticks: %+v, calls %v", inFlight, f.state, f.calls)
		}
	}
	if _, err := NewStepper(Options{Search: Sweep{Levels: []load.Target{rate(1)}}, Tick: time.Second, Lockstep: true},
		&fakeRun{}, &fakeRun{}); err == nil {
		t.Error("lockstep without fixed steps accepted")
	}
}

// TestStepperWindowsHoldEnoughRequests: a window of a few long requests
// stretches until it holds MinWindowRequests, at most MaxWindowStretch
// intervals, so that an LLM's level is judged on enough of them.
func TestStepperWindowsHoldEnoughRequests(t *testing.T) {
	s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{conc(1), conc(2)}}, Window: time.Second})
	for range 4 {
		f.tick(s, 20, 1000, 1) // 20 requests a tick: a window is 3 ticks
	}
	if got := len(s.trials); got != 1 {
		t.Fatalf("%d windows after 80 requests in 4 ticks, want 1 (of 60 requests)", got)
	}
	for range MaxWindowStretch {
		f.tick(s, 1, 1000, 1) // one request a tick: the window stops stretching
	}
	if got := len(s.trials); got != 2 {
		t.Errorf("%d windows; a window of %d ticks did not close at the stretch limit", got, MaxWindowStretch)
	}
}

// TestStepperOpenLoopStabilityReadsTheSends: a batching server finishes an
// open loop's 200 req/s in lumps (150, 250, 150, ... a tick), with the rest
// in flight: the sends agree and the server keeps up, so the level is stable
// at its first three windows. The same lumps with the requests in flight
// growing by 50 a tick are a server falling behind: never stable.
func TestStepperOpenLoopStabilityReadsTheSends(t *testing.T) {
	rate := load.Target{Mode: load.Rate, Rate: 200}
	run := func(grow int) record.Step {
		t.Helper()
		s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{rate}}, Window: time.Second, MaxTrials: 6})
		inFlight := 0
		for i := 0; len(f.steps) == 0 && i < 20; i++ {
			n := 150
			if i%2 == 1 {
				n = 250
			}
			// Sends are 200 a tick; what did not finish is in flight.
			inFlight += 200 - n + grow
			n -= grow
			f.tick(s, n, 10000, inFlight)
		}
		if len(f.steps) != 1 {
			t.Fatalf("the level was not measured: %d steps", len(f.steps))
		}
		return f.steps[0]
	}
	if st := run(0); !st.Measurement.Stable || st.Measurement.Trials != StabilityWindows {
		t.Errorf("lumpy completions of steady sends: stable %v after %d windows, want stable after %d",
			st.Measurement.Stable, st.Measurement.Trials, StabilityWindows)
	}
	if st := run(50); st.Measurement.Stable {
		t.Errorf("a quarter of the sends left in flight: stable after %d windows", st.Measurement.Trials)
	}
}

// TestStepperRisingLatencyIsNotStable: an open loop over the server's
// capacity may finish nearly all it sends for a few windows while its
// latency climbs window after window and the requests in flight grow: that
// is a growing backlog, not a level measured with unsteady latency. A
// latency that rises while the backlog shrinks, or goes up and down, is
// unsteady.
func TestStepperRisingLatencyIsNotStable(t *testing.T) {
	rate := load.Target{Mode: load.Rate, Rate: 200}
	run := func(us func(i int) int64, grow int) record.Step {
		t.Helper()
		s, f := newStepper(t, Options{Search: Sweep{Levels: []load.Target{rate}}, Window: time.Second, MaxTrials: 4})
		for i := 0; len(f.steps) == 0 && i < 20; i++ {
			f.tick(s, 195, us(i), 100+grow*i)
		}
		if len(f.steps) != 1 {
			t.Fatalf("the level was not measured: %d steps", len(f.steps))
		}
		return f.steps[0]
	}
	climbing := func(i int) int64 { return 10000 + 3000*int64(i) }
	if st := run(climbing, 5); st.Measurement.Stable {
		t.Errorf("latency rising 30%% a window as the backlog grows: stable (unsteady %v)", st.Measurement.UnsteadyLatency)
	}
	if st := run(climbing, -5); !st.Measurement.Stable || !st.Measurement.UnsteadyLatency {
		t.Errorf("latency rising as the backlog shrinks: stable %v, unsteady %v; want stable with unsteady latency",
			st.Measurement.Stable, st.Measurement.UnsteadyLatency)
	}
	if st := run(func(i int) int64 { return 10000 + 3000*int64(i%2) }, 0); !st.Measurement.Stable || !st.Measurement.UnsteadyLatency {
		t.Errorf("latency going up and down by 30%%: stable %v, unsteady %v; want stable with unsteady latency",
			st.Measurement.Stable, st.Measurement.UnsteadyLatency)
	}
}

// TestStepperProbeStabilityReadsLittlesLaw: a probe against a batching
// server finishes its requests in lumps (64, then 128, then 64 a window)
// at a steady latency: its throughput by Little's law is steady, so it is
// stable at its first three windows.
func TestStepperProbeStabilityReadsLittlesLaw(t *testing.T) {
	s, f := newStepper(t, Options{Search: &Capacity{Concurrency: 128, Base: load.Target{Mode: load.Rate}},
		Window: time.Second, MaxTrials: 6})
	for _, n := range []int{64, 64, 128, 64, 128, 64, 128} {
		if len(f.steps) == 0 {
			f.tick(s, n, 1300000, 128)
		}
	}
	if len(f.steps) != 1 {
		t.Fatalf("the probe was not measured: %d steps", len(f.steps))
	}
	if m := f.steps[0].Measurement; !m.Stable || m.Trials != StabilityWindows {
		t.Errorf("lumpy probe at a steady latency: %+v; want stable after %d windows", m, StabilityWindows)
	}
}
