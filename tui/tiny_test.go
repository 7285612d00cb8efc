package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// A terminal may be resized to any size, with any pane focused and the
// help open: every screen must draw, exactly the terminal's size, without
// a panic.
func TestEverySmallSizeDraws(t *testing.T) {
	runs := map[string][]stats.Snapshot{
		"closed": closedLoopRun(30), "localgpu": localGPURun(30, 2), "empty": nil,
	}
	var widths, heights []int
	for n := 1; n <= 8; n++ {
		widths = append(widths, n)
	}
	widths = append(widths, 21, 80, 100)
	for n := 1; n <= 12; n++ {
		heights = append(heights, n)
	}
	heights = append(heights, 24, 26)
	for name, snaps := range runs {
		for _, help := range []bool{false, true} {
			for focus := -1; focus < paneCount; focus++ {
				m := loaded(t, Options{Control: newFakeControl(4)}, snaps, 80, 24)
				m.board.ui.focus = focus
				m.help.ShowAll = help
				for _, w := range widths {
					for _, h := range heights {
						next, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
						out := render(t, next.(Model))
						lines := strings.Split(out, "\n")
						bad := len(lines) != h
						for _, l := range lines {
							bad = bad || ansi.StringWidth(l) != w
						}
						if bad {
							t.Fatalf("%s, focus %d, help %v: screen is not %dx%d:\n%s", name, focus, help, w, h, out)
						}
					}
				}
			}
		}
	}
}

// render is m.Render with a panic turned into a test failure naming it.
func render(t *testing.T, m Model) (out string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Render at %dx%d (focus %d, help %v) panicked: %v",
				m.common.Width, m.common.Height, m.board.ui.focus, m.help.ShowAll, r)
		}
	}()
	return m.Render()
}
