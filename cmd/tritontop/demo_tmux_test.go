package main

import (
	"strings"
	"testing"
	"time"
)

// TestDemoInTmux runs `tritontop demo` in a real terminal, as a newcomer
// would: the panes must show throughput, queue time and GPU utilization
// from the simulator, say the numbers are simulated, ↑ must raise the load,
// and q must exit with status 0.
func TestDemoInTmux(t *testing.T) {
	t.Parallel()
	tm := newTerminal(t, 120, 40, buildBinary(t)+" demo")
	screen, ok := tm.waitFor(30*time.Second, func() {}, func(s string) bool {
		return firstNumber(inferRe, s) > 0 && firstNumber(queueRe, s) > 0 && firstNumber(gpuRe, s) > 0
	})
	if !ok {
		t.Fatalf("dashboard never showed throughput, queue time and GPU utilization:\n%s", screen)
	}
	if !strings.Contains(screen, "SIMULATED") {
		t.Errorf("the dashboard does not say the numbers are simulated:\n%s", screen)
	}
	before := firstNumber(concRe, screen)
	tm.keys("Up")
	if screen, ok := tm.waitFor(5*time.Second, func() {}, func(s string) bool { return firstNumber(concRe, s) > before }); !ok {
		t.Errorf("↑ did not raise concurrency above %v:\n%s", before, screen)
	}
	tm.quitOK()
}
