package tui

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// metric reads one number from a snapshot; ok is false when the snapshot
// does not have it (missing is drawn as a gap, never as zero).
type metric func(s *stats.Snapshot) (v float64, ok bool)

// sparkRunes are the eight heights of a one-row chart.
var sparkRunes = [...]rune{'▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// fit cuts s (which may hold styles) to width w with an ellipsis and pads it
// with spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := cellWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// box draws a rounded frame of exactly w×h cells with the title in its top
// edge and lines inside it, one cell of padding left and right; lines past
// the frame's height are dropped.
func box(st *Styles, title string, focused bool, w, h int, lines []string) string {
	if w < 4 || h < 2 {
		return ""
	}
	border, titleStyle := st.Border, st.Title
	if focused {
		border, titleStyle = st.BorderFocus, st.TitleFocused
	}
	iw := w - 4
	var b strings.Builder
	b.Grow(w * h * 4)
	t := ansi.Truncate(" "+title+" ", w-3, "…")
	b.WriteString(border.Render("╭"))
	b.WriteString(titleStyle.Render(t))
	b.WriteString(border.Render(strings.Repeat("─", max(0, w-2-ansi.StringWidth(t))) + "╮"))
	side := border.Render("│")
	for i := range h - 2 {
		b.WriteByte('\n')
		b.WriteString(side)
		b.WriteByte(' ')
		if i < len(lines) {
			b.WriteString(fit(lines[i], iw))
		} else {
			b.WriteString(strings.Repeat(" ", iw))
		}
		b.WriteByte(' ')
		b.WriteString(side)
	}
	b.WriteByte('\n')
	b.WriteString(border.Render("╰" + strings.Repeat("─", w-2) + "╯"))
	return b.String()
}

// sparkline draws the last width values of m over the history on one row,
// scaled to top, or when top ≤ 0 to the largest value in the whole history:
// scaled to the visible ticks alone, a collapse that fills the line would
// look like a plateau. Ticks missing the value are blanks; when there are
// fewer ticks than cells the line is right-aligned so that now is always at
// the right edge.
func sparkline(style Paint, h *history, width int, m metric, top float64) string {
	if width <= 0 {
		return ""
	}
	n := min(width, h.len())
	if top <= 0 {
		for i := range h.len() {
			if v, ok := m(h.fromEnd(i)); ok && v > top {
				top = v
			}
		}
	}
	var b strings.Builder
	b.Grow(width*3 + len(style.pre) + len(style.post))
	b.WriteString(style.pre)
	for range width - n {
		b.WriteByte(' ')
	}
	for i := n - 1; i >= 0; i-- {
		v, ok := m(h.fromEnd(i))
		if !ok {
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(sparkRunes[sparkLevel(v, top)])
	}
	b.WriteString(style.post)
	return b.String()
}

// maxOver is the largest value of any of ms over the whole history, so
// that sparklines drawn with it share one scale.
func maxOver(h *history, ms ...metric) float64 {
	top := 0.0
	for i := range h.len() {
		s := h.fromEnd(i)
		for _, m := range ms {
			if v, ok := m(s); ok && v > top {
				top = v
			}
		}
	}
	return top
}

// sparkLevel maps v in [0, top] to one of the eight heights.
func sparkLevel(v, top float64) int {
	if top <= 0 || v <= 0 || math.IsNaN(v) {
		return 0
	}
	return min(7, max(0, int(math.Round(v/top*7))))
}

// bandGlyphs draw the bands of a band chart from the lowest up, so that the
// bands read apart without color.
var bandGlyphs = [...]rune{'█', '▓', '░'}

// cellGlyph chooses the glyph and band (-1: none) of the cell [y, y+1) for
// one column's series heights.
func cellGlyph(levels []float64, y float64) (rune, int) {
	if len(levels) == 1 {
		l := levels[0]
		switch {
		case l < 0 || l <= y:
			return ' ', -1
		case l >= y+1:
			return '█', 0
		default:
			e := int(math.Round((l - y) * 8))
			if e == 0 {
				return ' ', -1
			}
			return sparkRunes[e-1], 0
		}
	}
	for k, l := range levels {
		if l >= y+0.5 {
			return bandGlyphs[k], k
		}
	}
	return ' ', -1
}

// gauge draws a horizontal bar of width cells filled to f (0..1).
//
// bubbles/progress draws the same bar at about 30 times the cost (12–17 µs
// against 0.4–0.5 µs a gauge, BenchmarkGauge in BENCHMARKS.md), a tenth of a
// frame with two GPUs, and its colors ignore the dashboard's monochrome
// styles: the hand-drawn bar is kept.
func gauge(style Paint, f float64, width int) string {
	if width <= 0 {
		return ""
	}
	f = min(1, max(0, f))
	full := int(math.Round(f * float64(width)))
	return style.Render(strings.Repeat("█", full)) + strings.Repeat("░", width-full)
}

// segmentGlyphs tell the server-time segments apart without color: queue,
// input, infer, output, overhead.
var segmentGlyphs = [...]string{"▓", "▒", "█", "▒", "░"}

// stackedBar draws parts (queue, input, infer, output, overhead) side by
// side in width cells, each in proportion to its share of the sum; a
// nonzero part gets at least one cell.
func stackedBar(st *Styles, parts [5]float64, width int) string {
	total := 0.0
	for _, p := range parts {
		total += p
	}
	if total <= 0 || width <= 0 {
		return strings.Repeat(" ", max(0, width))
	}
	var cells [5]int
	used := 0
	for i, p := range parts {
		if p > 0 {
			cells[i] = max(1, int(math.Round(p/total*float64(width))))
			used += cells[i]
		}
	}
	// Settle the rounding error on the largest parts; with fewer cells
	// than parts, the smallest parts go.
	for used != width {
		big, small := 0, -1
		for i := range cells {
			if cells[i] > cells[big] {
				big = i
			}
			if cells[i] > 0 && (small < 0 || parts[i] < parts[small]) {
				small = i
			}
		}
		switch {
		case used < width:
			cells[big]++
			used++
		case cells[big] > 1:
			cells[big]--
			used--
		default:
			cells[small] = 0
			used--
		}
	}
	var b strings.Builder
	for i, c := range cells {
		if c > 0 {
			b.WriteString(st.Segments[i].Render(strings.Repeat(segmentGlyphs[i], c)))
		}
	}
	return b.String()
}

// join puts fields on one line with two spaces between them, skipping empty
// ones.
func join(fields ...string) string {
	var b strings.Builder
	for _, f := range fields {
		if f == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		b.WriteString(f)
	}
	return b.String()
}

// cellWidth is s's width in terminal cells. The dashboard's own text is SGR
// sequences and runes one cell wide, which it counts directly; anything else
// (a server's error message in any script) goes to ansi.StringWidth, which
// is exact but segments graphemes and costs ten times more.
func cellWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
			continue
		case c < 0x20 || c == 0x7f:
			return ansi.StringWidth(s)
		case c < 0x80:
			n++
			i++
			continue
		}
		// Box drawing, blocks and the other runes the dashboard draws are
		// three bytes: decoded here, they skip the general decoder, which
		// took a fifth of a frame.
		r, size := rune(utf8.RuneError), 1
		if c >= 0xe0 && c < 0xf0 && i+2 < len(s) && s[i+1]&0xc0 == 0x80 && s[i+2]&0xc0 == 0x80 {
			r = rune(c&0x0f)<<12 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
			size = 3
			if r < 0x800 || r >= 0xd800 && r < 0xe000 {
				r = utf8.RuneError // overlong or a surrogate: not text
			}
		} else {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if r == utf8.RuneError || !narrow(r) {
			return ansi.StringWidth(s)
		}
		n++
		i += size
	}
	return n
}

// narrow reports runes known to take one cell: Latin-1, general
// punctuation, arrows, math, box drawing, blocks, the geometric shapes
// short of the emoji ones, and the few symbols the dashboard uses.
func narrow(r rune) bool {
	switch {
	case r < 0x300:
		return true
	case r >= 0x2000 && r <= 0x22ff:
		return true
	case r >= 0x2500 && r <= 0x25fc:
		return true
	}
	return r == '⏸' || r == '⚠' || r == '✖'
}

// wrapped breaks s (a message from elsewhere, an error) into lines of at
// most width cells, so that the whole message can be read.
func wrapped(s string, width int) []string {
	if width <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(strings.ReplaceAll(s, "\n", " "), width, " "), "\n")
}
