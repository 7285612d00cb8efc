package session_test

import (
	"testing"

	"github.com/tritontop/tritontop/sim"
)

// traceServed is a model's successful requests in a simulator's own
// statistics.
func traceServed(t *testing.T, srv *sim.Server, model string) int64 {
	t.Helper()
	st, err := srv.Engine().ModelStatistics(model, "")
	if err != nil {
		t.Fatal(err)
	}
	return int64(st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount())
}

// traceGiven is the command line's Given for a Config that sets the named
// flags: for the settings whose zero a program cannot give otherwise
// (--trace-speed 0, --isl-block-size 0).
func traceGiven(flags ...string) map[string]bool {
	given := map[string]bool{}
	for _, f := range flags {
		given[f] = true
	}
	return given
}
