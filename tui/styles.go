package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Styles are every style the dashboard draws with. Monochrome styles carry
// no colors at all (NO_COLOR), only bold, faint and reverse, and every chart
// also differs by glyph, so nothing depends on color to be read.
type Styles struct {
	// Color is false for the monochrome styles.
	Color bool

	Brand        Paint // the program's name in the header
	Badge        Paint // SIMULATED
	Title        Paint // pane titles
	TitleFocused Paint
	Border       Paint
	BorderFocus  Paint
	Label        Paint // "p99", "queue"
	Value        Paint // the numbers
	Dim          Paint // hints, units, missing data
	Good         Paint // ● running
	Warn         Paint // warnings, paused
	Bad          Paint // errors, unreachable
	// Series are chart bands from the lowest (p50, req/s) up.
	Series [3]Paint
	// Segments are the server time parts: queue, input, infer, output,
	// overhead.
	Segments [5]Paint
	// The footer's help is drawn by bubbles/help, with Lip Gloss styles.
	HelpKey, HelpDesc, HelpSep lipgloss.Style
}

// Paint is a Lip Gloss style reduced to the escape sequences around its
// text, for one-line text without padding or width. Rendering with it is a
// concatenation, where Style.Render re-measures and re-parses its input:
// the dashboard paints thousands of fragments a frame.
type Paint struct {
	pre, post string
}

// NewPaint captures style's escape sequences.
func NewPaint(style lipgloss.Style) Paint {
	const mark = "\x00"
	r := style.Render(mark)
	i := strings.Index(r, mark)
	if i < 0 {
		return Paint{}
	}
	return Paint{pre: r[:i], post: r[i+len(mark):]}
}

// Render returns s painted.
func (p Paint) Render(s string) string {
	if p.pre == "" && p.post == "" || s == "" {
		return s
	}
	return p.pre + s + p.post
}

// NewStyles returns the dashboard's styles, colored or monochrome.
func NewStyles(color bool) *Styles {
	s := lipgloss.NewStyle()
	if !color {
		return &Styles{
			Brand:        NewPaint(s.Bold(true)),
			Badge:        NewPaint(s.Bold(true).Reverse(true)),
			Title:        NewPaint(s.Bold(true)),
			TitleFocused: NewPaint(s.Bold(true).Reverse(true)),
			Border:       NewPaint(s),
			BorderFocus:  NewPaint(s.Bold(true)),
			Label:        NewPaint(s),
			Value:        NewPaint(s.Bold(true)),
			Dim:          NewPaint(s.Faint(true)),
			Good:         NewPaint(s),
			Warn:         NewPaint(s.Bold(true)),
			Bad:          NewPaint(s.Bold(true).Reverse(true)),
			Series:       [3]Paint{},
			Segments:     [5]Paint{},
			HelpKey:      s.Bold(true),
			HelpDesc:     s,
			HelpSep:      s.Faint(true),
		}
	}
	c := lipgloss.Color
	return &Styles{
		Color:        true,
		Brand:        NewPaint(s.Bold(true).Foreground(c("#7AA2F7"))),
		Badge:        NewPaint(s.Bold(true).Foreground(c("#1A1B26")).Background(c("#E0AF68"))),
		Title:        NewPaint(s.Bold(true).Foreground(c("#7AA2F7"))),
		TitleFocused: NewPaint(s.Bold(true).Foreground(c("#1A1B26")).Background(c("#7AA2F7"))),
		Border:       NewPaint(s.Foreground(c("#565F89"))),
		BorderFocus:  NewPaint(s.Foreground(c("#7AA2F7"))),
		Label:        NewPaint(s.Foreground(c("#A9B1D6"))),
		Value:        NewPaint(s.Bold(true).Foreground(c("#C0CAF5"))),
		Dim:          NewPaint(s.Foreground(c("#737AA2"))),
		Good:         NewPaint(s.Foreground(c("#9ECE6A"))),
		Warn:         NewPaint(s.Bold(true).Foreground(c("#E0AF68"))),
		Bad:          NewPaint(s.Bold(true).Foreground(c("#F7768E"))),
		Series: [3]Paint{
			NewPaint(s.Foreground(c("#9ECE6A"))),
			NewPaint(s.Foreground(c("#E0AF68"))),
			NewPaint(s.Foreground(c("#F7768E"))),
		},
		Segments: [5]Paint{
			NewPaint(s.Foreground(c("#E0AF68"))), // queue
			NewPaint(s.Foreground(c("#7DCFFF"))), // input
			NewPaint(s.Foreground(c("#9ECE6A"))), // infer
			NewPaint(s.Foreground(c("#7DCFFF"))), // output
			NewPaint(s.Foreground(c("#BB9AF7"))), // overhead
		},
		HelpKey:  s.Bold(true).Foreground(c("#7AA2F7")),
		HelpDesc: s.Foreground(c("#737AA2")),
		HelpSep:  s.Foreground(c("#565F89")),
	}
}
