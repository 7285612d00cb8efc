package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SGR mouse reports as a terminal sends them (1-based cells): a left
// press and release at the latency pane of a 120x40 screen, and the wheel
// up over the focused chart.
const (
	clickLatency = "\x1b[<0;91;11M\x1b[<0;91;11m"
	wheelUp      = "\x1b[<64;40;25M"
)

// tmuxRun runs `tritontop ARGS` in a 120x40 tmux pane until the dashboard
// shows throughput. It returns a tmux command on the pane's
// server, a screen capture, and a wait for the exit status after q.
func tmuxRun(t *testing.T, bin, name string, args ...string) (tmux func(...string) string, capture func() string, exit func() string) {
	t.Helper()
	exitFile := filepath.Join(t.TempDir(), "exit")
	socket := "tritontop-mouse-" + name + "-" + strconv.Itoa(os.Getpid())
	tmux = func(a ...string) string {
		out, _ := exec.Command("tmux", append([]string{"-L", socket}, a...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	// A demo's GPU calibration goes to a cache of the test's own.
	script := "XDG_CACHE_HOME=" + filepath.Dir(exitFile) + " " + bin + " " + strings.Join(args, " ") + "; echo $? > " + exitFile
	if err := exec.Command("tmux", "-L", socket, "new-session", "-d", "-s", "demo", "-x", "120", "-y", "40", "sh", "-c", script).Run(); err != nil {
		t.Fatalf("tmux new-session: %v", err)
	}
	t.Cleanup(func() { tmux("kill-server") })
	capture = func() string { return tmux("capture-pane", "-p", "-t", "demo") }
	var screen string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if screen = capture(); firstNumber(inferRe, screen) > 0 {
			break
		}
	}
	if firstNumber(inferRe, screen) == 0 {
		t.Fatalf("dashboard never showed throughput:\n%s", screen)
	}
	exit = func() string {
		tmux("send-keys", "-t", "demo", "q")
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if b, err := os.ReadFile(exitFile); err == nil && len(b) > 0 {
				return strings.TrimSpace(string(b))
			}
		}
		return "none"
	}
	return tmux, capture, exit
}

// waitScreen polls the screen until ok holds, doing act before each look.
func waitScreen(capture func() string, act func(), ok func(string) bool) (string, bool) {
	var screen string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		act()
		if screen = capture(); ok(screen) {
			return screen, true
		}
	}
	return screen, false
}

// TestMouseInTmux runs `tritontop demo` in a real terminal with and
// without --mouse: only with it does the program ask for mouse reports
// (tmux's flags say what the program asked for), a click on the latency
// pane focuses it, the wheel scrolls the charts back and end brings them
// to now. Without it, the same click is ignored. `replay --mouse` asks
// for them too.
func TestMouseInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (CI installs it)")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test")
	}
	bin := buildBinary(t)
	focused := func(s string) bool {
		return strings.Contains(s, "╭ Latency") && !strings.Contains(s, "╭ Throughput")
	}

	t.Run("off", func(t *testing.T) {
		tmux, capture, exit := tmuxRun(t, bin, "off", "demo")
		if flags := tmux("display", "-p", "-t", "demo", "#{mouse_any_flag}#{mouse_button_flag}#{mouse_sgr_flag}"); flags != "000" {
			t.Errorf("without --mouse the program asked for mouse reports (tmux flags %q)", flags)
		}
		tmux("send-keys", "-t", "demo", "-l", clickLatency)
		time.Sleep(time.Second) // ten frames
		if screen := capture(); focused(screen) || !strings.Contains(screen, "╭ Throughput") {
			t.Errorf("without --mouse a click changed the panes:\n%s", screen)
		}
		if code := exit(); code != "0" {
			t.Errorf("demo exited with %s:\n%s", code, capture())
		}
	})

	t.Run("on", func(t *testing.T) {
		// Short ticks fill a chart's width with history in seconds.
		tmux, capture, exit := tmuxRun(t, bin, "on", "demo", "--mouse", "--tick", "50ms")
		if flags := tmux("display", "-p", "-t", "demo", "#{mouse_button_flag}#{mouse_sgr_flag}"); flags != "11" {
			t.Errorf("with --mouse the program did not ask for button and SGR mouse reports (tmux flags %q)", flags)
		}
		tmux("send-keys", "-t", "demo", "-l", clickLatency)
		screen, ok := waitScreen(capture, func() {}, focused)
		if !ok {
			t.Fatalf("a click on the latency pane did not focus it:\n%s", screen)
		}
		// Until the history is wider than the chart there is nothing to
		// scroll: the wheel is turned until the header says it scrolled.
		screen, ok = waitScreen(capture, func() { tmux("send-keys", "-t", "demo", "-l", wheelUp) },
			func(s string) bool { return strings.Contains(s, "◂ charts at") })
		if !ok {
			t.Fatalf("the wheel over the chart never scrolled it:\n%s", screen)
		}
		tmux("send-keys", "-t", "demo", "End")
		if screen, ok = waitScreen(capture, func() {}, func(s string) bool { return !strings.Contains(s, "charts at") }); !ok {
			t.Errorf("end did not bring the charts back to now:\n%s", screen)
		}
		if code := exit(); code != "0" {
			t.Errorf("demo exited with %s:\n%s", code, capture())
		}
	})

	t.Run("replay", func(t *testing.T) {
		tmux, capture, exit := tmuxRun(t, bin, "replay", "replay", "../../record/testdata/v1.jsonl", "--mouse")
		if flags := tmux("display", "-p", "-t", "demo", "#{mouse_button_flag}#{mouse_sgr_flag}"); flags != "11" {
			t.Errorf("replay --mouse did not ask for button and SGR mouse reports (tmux flags %q)", flags)
		}
		tmux("send-keys", "-t", "demo", "-l", clickLatency)
		if screen, ok := waitScreen(capture, func() {}, focused); !ok {
			t.Errorf("a click on the replay's latency pane did not focus it:\n%s", screen)
		}
		if code := exit(); code != "0" {
			t.Errorf("replay exited with %s:\n%s", code, capture())
		}
	})
}
