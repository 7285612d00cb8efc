package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/textsafe"
)

// gateFlags are the flags that make a run a CI gate: thresholds that fail
// it with exit code 99, an early end at a lasting breach, a JUnit file,
// and repeats of the same load.
type GatesConfig struct {
	Thresholds  []string
	PerStep     bool
	AbortOnFail bool
	JUnit       string
	Repeat      int
	RepeatPause time.Duration
	StepSummary string

	// gates are the parsed thresholds, the run's and each model's.
	gates gate.Gates
}

// maxRepeats bounds --repeat: a gate repeats a short load to know its
// noise, not to run all night.
const maxRepeats = 100

// errRepeatLoadRunOnly refuses --repeat in anything but a load run.
var errRepeatLoadRunOnly = errors.New("--repeat repeats a load run (tritontop -m MODEL ...); tritontop demo runs once (in tritontop plan, --repeat repeats the capacity measurement)")

// checkGateFlags parses the thresholds (the run's and each --load-file
// model's) and checks the gate flags against each other and the files they
// write. Every error is one line naming the bad part.
func checkGateFlags(f *Config) error {
	g := &f.Gates
	ts, err := gate.ParseAll(g.Thresholds)
	if err != nil {
		return fmt.Errorf("--threshold: %w", err)
	}
	g.gates = gate.Gates{Run: ts, PerStep: g.PerStep}
	for _, m := range f.models {
		if len(m.thresholds) == 0 {
			continue
		}
		mts, err := gate.ParseAll(m.thresholds)
		if err != nil {
			return fmt.Errorf("%s: %w", textsafe.Excerpt(m.where, maxQuoted), err)
		}
		if g.gates.Models == nil {
			g.gates.Models = map[string][]gate.Threshold{}
		}
		g.gates.Models[m.name] = mts
	}
	if g.gates.Empty() {
		switch {
		case g.PerStep:
			return errors.New("--threshold-per-step needs a --threshold to check")
		case g.AbortOnFail:
			return errors.New("--abort-on-fail needs a --threshold to watch")
		case g.JUnit != "":
			return errors.New("--junit writes the thresholds' checks: give a --threshold")
		}
	}
	if g.Repeat < 1 || g.Repeat > maxRepeats {
		return fmt.Errorf("--repeat %d is out of range: use 1 to %d", g.Repeat, maxRepeats)
	}
	// runRepeats runs each repeat as a run of one; anything else with
	// --repeat is tritontop demo (tritontop plan's --repeat is its own).
	if g.Repeat > 1 {
		return errRepeatLoadRunOnly
	}
	if g.RepeatPause < 0 {
		return fmt.Errorf("--repeat-pause %s is negative", g.RepeatPause)
	}
	if g.JUnit != "" {
		if err := outfile.CheckPath("--junit", g.JUnit); err != nil {
			return err
		}
	}
	if g.StepSummary != "" {
		if err := outfile.CheckPath("--step-summary", g.StepSummary); err != nil {
			return err
		}
	}
	return nil
}
