package main

import (
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

// mouseTerminal runs `tritontop ARGS` in a 120x40 pane until the dashboard
// shows throughput.
func mouseTerminal(t *testing.T, args string) *terminal {
	t.Helper()
	tm := newTerminal(t, 120, 40, buildBinary(t)+" "+args)
	if screen, ok := tm.waitFor(30*time.Second, func() {}, func(s string) bool { return firstNumber(inferRe, s) > 0 }); !ok {
		t.Fatalf("dashboard never showed throughput:\n%s", screen)
	}
	return tm
}

// TestMouseInTmux runs `tritontop demo` in a real terminal with and
// without --mouse: only with it does the program ask for mouse reports
// (tmux's flags say what the program asked for), a click on the latency
// pane focuses it, the wheel scrolls the charts back and end brings them
// to now. Without it, the same click is ignored. `replay --mouse` asks
// for them too.
func TestMouseInTmux(t *testing.T) {
	t.Parallel()
	focused := func(s string) bool {
		return strings.Contains(s, "╭ Latency") && !strings.Contains(s, "╭ Throughput")
	}
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		tm := mouseTerminal(t, "demo")
		if flags := tm.flags("#{mouse_any_flag}#{mouse_button_flag}#{mouse_sgr_flag}"); flags != "000" {
			t.Errorf("without --mouse the program asked for mouse reports (tmux flags %q)", flags)
		}
		tm.keys("-l", clickLatency)
		// Nothing is to change: look at the screen over ten frames.
		if screen, changed := tm.waitFor(time.Second, func() {}, focused); changed || !strings.Contains(screen, "╭ Throughput") {
			t.Errorf("without --mouse a click changed the panes:\n%s", screen)
		}
		tm.quitOK()
	})
	t.Run("on", func(t *testing.T) {
		t.Parallel()
		// Short ticks fill a chart's width with history in seconds.
		tm := mouseTerminal(t, "demo --mouse --tick 50ms")
		if flags := tm.flags("#{mouse_button_flag}#{mouse_sgr_flag}"); flags != "11" {
			t.Errorf("with --mouse the program did not ask for button and SGR mouse reports (tmux flags %q)", flags)
		}
		tm.keys("-l", clickLatency)
		screen, ok := tm.waitFor(20*time.Second, func() {}, focused)
		if !ok {
			t.Fatalf("a click on the latency pane did not focus it:\n%s", screen)
		}
		// Until the history is wider than the chart there is nothing to
		// scroll: the wheel is turned until the header says it scrolled.
		screen, ok = tm.waitFor(20*time.Second, func() { tm.keys("-l", wheelUp) },
			func(s string) bool { return strings.Contains(s, "◂ charts at") })
		if !ok {
			t.Fatalf("the wheel over the chart never scrolled it:\n%s", screen)
		}
		tm.keys("End")
		if screen, ok = tm.waitFor(20*time.Second, func() {}, func(s string) bool { return !strings.Contains(s, "charts at") }); !ok {
			t.Errorf("end did not bring the charts back to now:\n%s", screen)
		}
		tm.quitOK()
	})
	t.Run("replay", func(t *testing.T) {
		t.Parallel()
		tm := mouseTerminal(t, "replay ../../record/testdata/v1.jsonl --mouse")
		if flags := tm.flags("#{mouse_button_flag}#{mouse_sgr_flag}"); flags != "11" {
			t.Errorf("replay --mouse did not ask for button and SGR mouse reports (tmux flags %q)", flags)
		}
		tm.keys("-l", clickLatency)
		if screen, ok := tm.waitFor(20*time.Second, func() {}, focused); !ok {
			t.Errorf("a click on the replay's latency pane did not focus it:\n%s", screen)
		}
		tm.quitOK()
	})
}
