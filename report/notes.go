package report

import (
	"fmt"
	"time"

	"github.com/tritontop/tritontop/record"
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
	return out
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
