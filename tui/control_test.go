package tui

import (
	"fmt"
	"sync"
	"time"

	"github.com/tritontop/tritontop/load"
)

// fakeControl is a driver.Control that records the calls it gets.
type fakeControl struct {
	mu    sync.Mutex
	state load.State
	calls []string
}

func newFakeControl(n int) *fakeControl {
	return &fakeControl{state: load.State{Target: load.Target{Mode: load.Concurrency, Concurrency: n}, InFlight: n}}
}

// newFakeSequenceControl is a closed loop at n driving a stateful model:
// n sequences running.
func newFakeSequenceControl(n int) *fakeControl {
	f := newFakeControl(n)
	f.state.Sequences = n
	return f
}

func newFakeRateControl(r float64) *fakeControl {
	return &fakeControl{state: load.State{Target: load.Target{Mode: load.Rate, Rate: r,
		Distribution: load.Poisson}, InFlight: 24}}
}

func (f *fakeControl) record(c string) {
	f.calls = append(f.calls, c)
}

func (f *fakeControl) SetLoad(l load.Target) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("SetLoad")
	f.state.Target = l
}

func (f *fakeControl) SetConcurrency(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record(fmt.Sprintf("SetConcurrency(%d)", n))
	f.state.Target.Mode, f.state.Target.Concurrency = load.Concurrency, n
}

func (f *fakeControl) SetRate(r float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record(fmt.Sprintf("SetRate(%g)", r))
	f.state.Target.Mode, f.state.Target.Rate = load.Rate, r
}

func (f *fakeControl) Pause() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("Pause")
	f.state.Paused = true
}

func (f *fakeControl) Resume() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("Resume")
	f.state.Paused = false
}

func (f *fakeControl) State() load.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

func (f *fakeControl) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// fakeWindows records window changes.
type fakeWindows struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeWindows) SetWindow(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "SetWindow("+d.String()+")")
}

func (f *fakeWindows) ResetWindows() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "ResetWindows")
}

// fakeReplay records replay calls and keeps the state a replay reports: a
// step pauses it, as record.Replay's does.
type fakeReplay struct {
	mu     sync.Mutex
	calls  []string
	paused bool
	speed  float64
	index  int
	total  int
}

func (f *fakeReplay) add(c string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

func (f *fakeReplay) Pause()  { f.set(func() { f.paused = true }, "Pause") }
func (f *fakeReplay) Resume() { f.set(func() { f.paused = false }, "Resume") }
func (f *fakeReplay) Step(n int) {
	f.set(func() { f.paused = true; f.index = min(max(f.index+n, 0), max(f.total-1, 0)) }, fmt.Sprintf("Step(%d)", n))
}
func (f *fakeReplay) SetSpeed(s float64) {
	f.set(func() { f.speed = s }, fmt.Sprintf("SetSpeed(%g)", s))
}

func (f *fakeReplay) set(change func(), call string) {
	f.mu.Lock()
	change()
	f.mu.Unlock()
	f.add(call)
}

func (f *fakeReplay) Paused() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paused
}

func (f *fakeReplay) Speed() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.speed
}

func (f *fakeReplay) Position() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.index, f.total
}

func (f *fakeReplay) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}
