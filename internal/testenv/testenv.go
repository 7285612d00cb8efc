// Package testenv says which of the suite's passes a test runs in. The
// README's test command (go test ./...) runs every test that holds on a
// busy shared host; two kinds run only when CI's passes ask for them:
//
//   - TestQuiet… tests measure timing and need the host to themselves:
//     .ci/run's quiet pass runs them alone, with TRITONTOP_QUIET_PASS=1;
//   - TestStress… tests load the host on purpose (CPU hogs, repeated runs)
//     to show a measurement holds there: .ci/run's stress pass runs them
//     beside one CPU hog per core, with TRITONTOP_STRESS_PASS=1.
package testenv

import (
	"os"
	"testing"

	"github.com/tritontop/tritontop/internal/testproc"
)

// Environment variables of CI's passes.
const (
	QuietPassEnv  = "TRITONTOP_QUIET_PASS"
	StressPassEnv = "TRITONTOP_STRESS_PASS"
	// HostBusyEnv says that the host is kept busy already: .ci/run runs
	// the stress pass beside its first pass, whose tests keep both cores
	// busy.
	HostBusyEnv = "TRITONTOP_HOST_BUSY"
)

// LoadHost keeps the host busy for the rest of t: n CPU hogs, or none
// where HostBusyEnv says something else keeps it busy (a stress test's
// own hogs beside CI's first pass would load the first pass's tests past
// the two hogs they are made to hold beside).
func LoadHost(t testing.TB, n int) {
	t.Helper()
	if os.Getenv(HostBusyEnv) != "" {
		t.Logf("no CPU hogs: %s says the host is busy already", HostBusyEnv)
		return
	}
	testproc.CPUHogs(t, n)
}

// Quiet skips t unless the quiet pass runs it.
func Quiet(t testing.TB) {
	t.Helper()
	if os.Getenv(QuietPassEnv) == "" {
		t.Skipf("needs the host to itself: run alone by .ci/run's quiet pass (%s=1 go test -run '^TestQuiet' ./...)", QuietPassEnv)
	}
}

// Stress skips t unless the stress pass runs it.
func Stress(t testing.TB) {
	t.Helper()
	if os.Getenv(StressPassEnv) == "" {
		t.Skipf("loads the host on purpose: run by .ci/run's stress pass (%s=1 go test -run '^TestStress' ./...)", StressPassEnv)
	}
}
