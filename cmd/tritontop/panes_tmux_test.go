package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestNarrowDashboardInTmux runs `tritontop demo` in a real terminal
// resized to 80x24: the server pane keeps the request total and its unit,
// the latency pane's avg line names its span whole, and m with one model
// says why it does nothing.
func TestNarrowDashboardInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (CI installs it)")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test")
	}
	bin := buildBinary(t)
	tmux, capture, exit := tmuxRun(t, bin, "narrow", "demo", "--concurrency", "4")
	tmux("resize-window", "-t", "demo", "-x", "80", "-y", "24")
	total := regexp.MustCompile(`= request [0-9.]+ ms +│`)
	avg := regexp.MustCompile(`│ avg +[0-9.]+[^│]*[0-9] s[^│…]*│`)
	screen, ok := waitScreen(capture, func() {}, func(s string) bool {
		lines := strings.Split(s, "\n")
		return len(lines) == 24 && len(lines[0]) > 0 && total.MatchString(s) && avg.MatchString(s)
	})
	if !ok {
		t.Fatalf("at 80x24 the server pane's total or the latency pane's avg span is cut:\n%s", screen)
	}
	tmux("send-keys", "-t", "demo", "m")
	if screen, ok = waitScreen(capture, func() {}, func(s string) bool {
		return strings.Contains(s, "one model: m switches models")
	}); !ok {
		t.Errorf("m with one model said nothing:\n%s", screen)
	}
	if code := exit(); code != "0" {
		t.Errorf("demo exited with %s:\n%s", code, capture())
	}
}
