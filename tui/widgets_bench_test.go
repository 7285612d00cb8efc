package tui

import (
	"image/color"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// The latency table and the GPU gauge are drawn by hand. These benchmarks
// set each beside the same drawing through the library made for it
// (lipgloss/table, bubbles/progress), the measurements behind that choice.

// lipglossLatencyTable is latencyTable's content through lipgloss/table:
// no borders, the row names left, the percentiles right-aligned in
// fixed-width columns.
func lipglossLatencyTable(st *Styles, ws *stats.ClientStats, iw int) []string {
	label := tableLabel(iw)
	col := min(9, max(5, (iw-label)/6))
	row := func(name string, l *stats.Latency) []string {
		r := []string{name}
		for _, d := range [...]time.Duration{l.P50, l.P90, l.P95, l.P99, l.P999, l.Max} {
			r = append(r, fmtMsIn(d, col-1))
		}
		return r
	}
	rows := [][]string{row("send", &ws.Latency)}
	if ws.Scheduled != nil {
		rows = [][]string{row("sched", ws.Scheduled), rows[0]}
	}
	base := lipgloss.NewStyle()
	t := table.New().Border(lipgloss.HiddenBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderColumn(false).BorderHeader(false).
		Headers("ms", "p50", "p90", "p95", "p99", "p99.9", "max").Rows(rows...).
		StyleFunc(func(r, c int) lipgloss.Style {
			s := base.Width(col).Align(lipgloss.Right).Foreground(lipgloss.Color("#C0CAF5")).Bold(true)
			switch {
			case c == 0:
				s = base.Width(label).Foreground(lipgloss.Color("#A9B1D6"))
			case r == table.HeaderRow:
				s = base.Width(col).Align(lipgloss.Right).Foreground(lipgloss.Color("#A9B1D6"))
			}
			return s
		})
	return strings.Split(t.String(), "\n")
}

func BenchmarkLatencyTable(b *testing.B) {
	st := NewStyles(true)
	ws := &openLoopRun(1)[0].Window
	for _, c := range []struct {
		name string
		draw func(*Styles, *stats.ClientStats, int) []string
	}{{"hand", latencyTable}, {"lipgloss", lipglossLatencyTable}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.draw(st, ws, 62)
			}
		})
	}
}

func BenchmarkGauge(b *testing.B) {
	st := NewStyles(true)
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = gauge(st.Series[0], 0.92, 16)
		}
	})
	b.Run("progress", func(b *testing.B) {
		p := progress.New(progress.WithWidth(16), progress.WithoutPercentage(),
			progress.WithFillCharacters('█', '░'), progress.WithColors(color.RGBA{0x9e, 0xce, 0x6a, 0xff}))
		b.ReportAllocs()
		for b.Loop() {
			_ = p.ViewAs(0.92)
		}
	})
}

// The two tables say the same: the same cells, row by row, once the
// styles are stripped and the spaces evened out.
func TestLipglossTableMatchesHandTable(t *testing.T) {
	st := NewStyles(false)
	ws := &openLoopRun(1)[0].Window
	hand, lib := latencyTable(st, ws, 62), lipglossLatencyTable(st, ws, 62)
	if len(hand) != len(lib) {
		t.Fatalf("hand %d rows, lipgloss %d", len(hand), len(lib))
	}
	for i := range hand {
		if h, l := strings.Fields(ansi.Strip(hand[i])), strings.Fields(ansi.Strip(lib[i])); strings.Join(h, " ") != strings.Join(l, " ") {
			t.Errorf("row %d: hand %q, lipgloss %q", i, h, l)
		}
	}
}
