package tui

import (
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/stats"
)

// DefaultFPS is the dashboard's frame rate when Options.FPS is zero.
const DefaultFPS = 10

// DefaultRateStep is the fraction by which ↑/↓ change an open-loop rate when
// Options.Step.RateFactor is zero: ↑ multiplies by 1.1, ↓ divides by 1.1, so
// a press up and a press down return to the same rate.
const DefaultRateStep = 0.10

// HistoryLength is how many snapshots the dashboard keeps for its charts. It
// is fixed so that memory does not grow with run time; at one snapshot a
// second it covers more than eight minutes, wider than any chart drawn.
const HistoryLength = 512

// LoadControl changes a live run's load and reports the generator's state;
// *driver.Driver is one.
type LoadControl interface {
	SetConcurrency(n int)
	SetRate(r float64)
	Pause()
	Resume()
	State() load.State
}

// WindowControl changes the span of the aggregator's window statistics
// (Snapshot.Window). A zero duration means the whole run.
type WindowControl interface {
	SetWindow(d time.Duration)
	ResetWindows()
}

// ReplayControl drives a replay source: pause, resume, step by whole ticks
// (negative steps go back) and playback speed (1 is real time, 0 as fast
// as possible). The dashboard reads Paused, Speed and Position every frame,
// so the header follows the source's own state (a step pauses it, a
// replay may start at any speed and holds at its end).
type ReplayControl interface {
	Pause()
	Resume()
	Step(n int)
	SetSpeed(f float64)
	Paused() bool
	Speed() float64
	// Position is the index of the last snapshot played (-1 before the
	// first) and the number of snapshots.
	Position() (index, total int)
}

// SweepProgress reports where a stepped run (a range or an SLO search)
// stands; *plan.Stepper is one. The dashboard reads it every frame.
type SweepProgress interface {
	Progress() plan.Progress
}

// HeaderInfo is what the header says about the server and the run; it does
// not change while the dashboard runs.
type HeaderInfo struct {
	// Server is the address load goes to, e.g. "127.0.0.1:8001".
	Server string
	// Protocol is "gRPC", "HTTP" or "gRPC stream".
	Protocol        string
	Model           string
	Version         string
	MaxBatch        int
	DynamicBatching bool
	// Decoupled says that the model is decoupled (an LLM streaming its
	// tokens): the streaming pane replaces the latency pane from the start,
	// before any request has finished.
	Decoupled bool
	// Simulated marks a run against tritontop's own simulator.
	Simulated bool
	// SharedProcess says that the server runs inside this process (as in
	// tritontop demo), so tritontop's own CPU includes the server's work:
	// the dashboard labels it "tritontop+sim" and does not call the client
	// the bottleneck.
	SharedProcess bool
	// Recording is the run file being written, if any.
	Recording string
}

// ModelControl is one model of a run over several models (Snapshot.Models,
// in the same order): its name, what the header says about it when it is
// shown, and in a live run what changes its load.
type ModelControl struct {
	Name            string
	Version         string
	MaxBatch        int
	DynamicBatching bool
	Decoupled       bool
	// Control changes the model's load; nil in a replay.
	Control LoadControl
}

// StepSizes are the load changes one key press makes.
type StepSizes struct {
	// Concurrency, when positive, is a fixed step; zero selects the default
	// ladder (see NextConcurrency).
	Concurrency int
	// RateFactor is the relative rate step; zero selects DefaultRateStep.
	RateFactor float64
}

// Options configure the dashboard.
type Options struct {
	// Snapshots is the aggregator's (or a replay's) output. The dashboard
	// drains it once per frame and never blocks on it; closing it ends the
	// feed, not the dashboard.
	Snapshots <-chan stats.Snapshot
	// Control changes the driver's load; nil disables the load keys (replay).
	Control LoadControl
	// Models are the models of a run over several: m then selects the
	// model the detailed panes show (or all of them together), ↑/↓ and p
	// act on the model shown (on each model when all are shown), and a
	// Models pane has a row per model. Control is then unused. A replay
	// need not set it: its snapshots name the models.
	Models []ModelControl
	// Windows changes the window statistics' span; may be nil.
	Windows WindowControl
	// Replay drives a replay; nil in a live run.
	Replay ReplayControl
	// Sweep is the stepped run's progress; nil when the load is not
	// stepped. While it runs, the load keys are off: the steps set the
	// load.
	Sweep  SweepProgress
	Header HeaderInfo
	// FPS is frames per second; zero selects DefaultFPS.
	FPS  int
	Step StepSizes
	// NoColor forces monochrome styles. The NO_COLOR environment variable
	// and a colorless terminal have the same effect.
	NoColor bool
	// Mouse asks the terminal for mouse events: a left click on a pane
	// focuses it, the wheel over a chart scrolls the charts' history and
	// end (or G) returns them to now. Off, no mouse mode is requested, so
	// the terminal's own text selection keeps working.
	Mouse bool
}
