package tui

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

func TestSparklineGapsAndAlignment(t *testing.T) {
	snaps := closedLoopRun(6)
	snaps[2].Metrics.Available = false // a scrape failed in tick 3
	h := historyOf(snaps)
	st := NewStyles(false)
	got := sparkline(st.Series[0], h, 8, gpuUtil(0, "GPU-3f2a1b2c"), 1)
	// Two blank cells before the first tick, a gap at tick 3, and all at
	// 4 in flight: 400 of 1,200 req/s, a third of 92 % ≈ 31 % → level 2.
	if want := "  ▃▃ ▃▃▃"; got != want {
		t.Errorf("sparkline %q, want %q", got, want)
	}
}

func TestGPUMissingIsNeverZero(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(32)}, degradedRun(64), 120, 40)
	p := m.panes[focusGPU]
	p.SetSize(40, 8)
	out := ansi.Strip(p.View())
	if strings.Contains(out, "0%") || !strings.Contains(out, "no GPU metrics") {
		t.Errorf("GPU pane without metrics:\n%s", out)
	}
}

// TestGPUMemoryOnly checks a GPU that reports its memory and nothing else:
// memory shown, utilization and power a dash, never 0 %, in the two-line
// and the one-line layouts.
func TestGPUMemoryOnly(t *testing.T) {
	snaps := closedLoopRun(8)
	for i := range snaps {
		snaps[i].Metrics.GPUs = []stats.GPU{{UUID: "GPU-m", Name: "NVIDIA H200", MemoryUsed: 31.5e9, MemoryTotal: 141e9, HasMemory: true}}
	}
	m := loaded(t, Options{Control: newFakeControl(32)}, snaps, 120, 40)
	p := m.panes[focusGPU]
	for _, h := range []int{4, 3} {
		p.SetSize(44, h)
		out := ansi.Strip(p.View())
		if strings.Contains(out, "0%") || strings.Contains(out, "0 W") || strings.Contains(out, "░") ||
			!strings.Contains(out, "31.5 / 141 GB") || !strings.Contains(out, "—") {
			t.Errorf("memory-only GPU at height %d:\n%s", h, out)
		}
	}
	p.SetSize(44, 4)
	if out := ansi.Strip(p.View()); !strings.Contains(out, "power —") || !strings.Contains(out, "utilization — not reported") {
		t.Errorf("memory-only GPU, two lines:\n%s", out)
	}
	// No point of its sparkline comes from a tick without utilization.
	if v, ok := gpuUtil(0, "GPU-m")(&snaps[0]); ok {
		t.Errorf("utilization %v read from a GPU that did not report it", v)
	}
}

func TestStackedBarFillsWidth(t *testing.T) {
	st := NewStyles(false)
	for _, w := range []int{1, 5, 17, 80, 113} {
		parts := [5]float64{17e6, 0.3e6, 8e6, 0.2e6, 0.4e6}
		if got := cellWidth(stackedBar(st, parts, w)); got != w && w >= 4 {
			t.Errorf("stacked bar at %d cells is %d wide", w, got)
		}
	}
}

func TestCellWidthAgreesWithAnsi(t *testing.T) {
	m := loaded(t, Options{Control: newFakeControl(32)}, degradedRun(64), 200, 60)
	for _, s := range append(strings.Split(m.Render(), "\n"),
		"错误: 连接被拒绝", "e\u0301", "⚡ fast", "\x1b[1mbold\x1b[m ⏸ paused") {
		if got, want := cellWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("cellWidth(%q) = %d, ansi says %d", s, got, want)
		}
	}
}

func TestEverySizeKeepsItsShape(t *testing.T) {
	open := openLoopRun(40)
	// A demo on a host with GPUs of its own, one of whose server GPUs
	// reports memory only: every optional line at once.
	demo := localGPURun(40, 2)
	for i := range demo {
		demo[i].Metrics.GPUs[1] = partialGPURun(1)[0].Metrics.GPUs[1]
	}
	for w := 1; w <= 220; w += 7 {
		for h := 1; h <= 64; h += 5 {
			snaps, o := open, Options{Control: newFakeRateControl(800)}
			if (w+h)%2 == 0 {
				snaps, o = demo, Options{Control: newFakeControl(8), Header: sharedHeader}
			}
			m := loaded(t, o, snaps, w, h)
			out := m.Render()
			lines := strings.Split(out, "\n")
			if len(lines) != h {
				t.Fatalf("%dx%d: %d lines", w, h, len(lines))
			}
			for i, l := range lines {
				if got := ansi.StringWidth(l); got != w {
					t.Fatalf("%dx%d: line %d is %d wide: %q", w, h, i, got, ansi.Strip(l))
				}
			}
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{fmtDur(850 * time.Microsecond), "850µs"},
		{fmtDur(3420 * time.Microsecond), "3.42ms"},
		{fmtDur(38200 * time.Microsecond), "38.2ms"},
		{fmtDur(1234 * time.Millisecond), "1.23s"},
		{fmtRate(12.34), "12.3"},
		{fmtRate(1284), "1,284"},
		{fmtRate(128_400), "128k"},
		{fmtInt(-1234567), "-1,234,567"},
		{fmtPct(0.034), "3.4%"},
		{fmtPct(0.92), "92%"},
		{fmtElapsed(192 * time.Second), "03:12"},
		{fmtElapsed(3723 * time.Second), "1:02:03"},
		{fmtWindow(10 * time.Second), "last 10 s"},
		{fmtWindow(time.Minute), "last 1 min"},
		{fmtWindow(0), "whole run"},
		{fmt.Sprint(niceCeil(1228)), "1500"},
		{fmt.Sprint(niceCeil(0.031)), "0.04"},
		{fmtCores(15.2), "15.2 cores"},
		{fmtCores(0.07), "7.0%"},
		{fmtRate(-1), "–"},
		{fmtRate(math.NaN()), "–"},
		{fmtRate(12_840_000), "12.8M"},
		{fmtCount(842), "842"},
		{fmtCount(3842), "3,842"},
		{fmtCount(38_420), "38k"},
		{fmtCount(3_842_000), "3.84M"},
		{paren(""), ""},
		{paren("x"), " (x)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	m := loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(64), 120, 40)
	if m.common.Styles.Color {
		t.Fatal("NO_COLOR set but styles have color")
	}
	if out := m.Render(); strings.Contains(out, "38;2;") || strings.Contains(out, "48;2;") {
		t.Error("NO_COLOR screen has colors")
	}
}

func TestColorlessTerminalDropsColor(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the colored goldens need colors
	m := loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(64), 120, 40)
	if !m.common.Styles.Color {
		t.Fatal("colors off without NO_COLOR")
	}
	next, _ := m.Update(colorProfile(false))
	if next.(Model).common.Styles.Color {
		t.Error("an ASCII terminal kept colors")
	}
}

// colorProfile is the message a terminal with (or without) colors sends.
func colorProfile(color bool) tea.Msg {
	if color {
		return tea.ColorProfileMsg{Profile: colorprofile.TrueColor}
	}
	return tea.ColorProfileMsg{Profile: colorprofile.ASCII}
}
