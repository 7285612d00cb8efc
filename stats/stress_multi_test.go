package stats

import (
	"context"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testenv"
)

// stressMulti runs o for 10 s under two CPU hogs with the collector's
// default read wait and checks its server numbers (checkMulti): every
// tick's numbers of each model or replica are its own, its ticks with
// their late reads add up to the simulators' own counts, and at most 1
// tick in 10 lacks any entry's numbers.
func stressMulti(t *testing.T, o multiOptions) {
	t.Helper()
	testenv.Stress(t)
	testenv.LoadHost(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o.duration, o.interval = 10*time.Second, time.Second
	m := runMulti(t, ctx, o)
	c := checkMulti(t, m)
	// As in TestStressServerStatsOnBusyHost: the race detector slows
	// each read several times over, and the bound is then 1 in 3.
	per := 10
	if testenv.Race {
		per = 3
	}
	if c.missing*per > len(m.snaps) {
		t.Errorf("%d of %d ticks without server statistics, want at most 1 in %d", c.missing, len(m.snaps), per)
	}
}

// TestStressServerStatsTwoModelsOnBusyHost (stress: run under CPU hogs):
// two models on one simulator, each with its own statistics reads.
func TestStressServerStatsTwoModelsOnBusyHost(t *testing.T) {
	stressMulti(t, multiOptions{models: true})
}

// TestStressServerStatsTwoReplicasOnBusyHost (stress: run under CPU hogs):
// one model on two simulators, each read on its own.
func TestStressServerStatsTwoReplicasOnBusyHost(t *testing.T) {
	stressMulti(t, multiOptions{})
}
