package main

import (
	"regexp"
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

// TestNarrowDashboardInTmux runs `tritontop demo` in a real terminal of
// 80x24: the server pane keeps the request total and its unit, the latency
// pane's avg line names its span whole, and m with one model says why it
// does nothing.
func TestNarrowDashboardInTmux(t *testing.T) {
	t.Parallel()
	tm := newTerminal(t, 80, 24, buildBinary(t)+" demo --concurrency 4")
	total := regexp.MustCompile(`= request [0-9.]+ ms +│`)
	avg := regexp.MustCompile(`│ avg +[0-9.]+[^│]*[0-9] s[^│…]*│`)
	screen, ok := tm.waitFor(30*time.Second, func() {}, func(s string) bool {
		lines := strings.Split(s, "\n")
		return len(lines) == 24 && len(lines[0]) > 0 && total.MatchString(s) && avg.MatchString(s)
	})
	if !ok {
		t.Fatalf("at 80x24 the server pane's total or the latency pane's avg span is cut:\n%s", screen)
	}
	tm.keys("m")
	if screen, ok = tm.waitFor(20*time.Second, func() {}, func(s string) bool {
		return strings.Contains(s, "one model: m switches models")
	}); !ok {
		t.Errorf("m with one model said nothing:\n%s", screen)
	}
	tm.quitOK()
}
