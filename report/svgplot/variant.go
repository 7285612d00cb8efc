package svgplot

import (
	"fmt"
	"strconv"
)

// variantStyle is how variant k of a colour is drawn: the colour mixed
// towards black (mix < 0) or white (mix > 0) by |mix|, and a dash pattern.
type variantStyle struct {
	mix  float64
	dash string
}

// variants alternate darker and lighter shades, each with a dash pattern
// of its own, so that the members of a family stay apart in colour when
// printed in grey and in pattern when the shades are hard to tell.
var variants = [...]variantStyle{
	{0, ""},
	{-0.4, "6 3"},
	{0.45, "2 2"},
	{-0.65, "9 3 2 3"},
	{0.65, "1 3"},
	{-0.2, "12 4"},
	{0.25, "4 2 1 2"},
	{-0.5, "3 5"},
}

// VariantLen is the number of distinct variants of one colour; Variant
// indices repeat from there.
const VariantLen = len(variants)

func variantOf(v int) variantStyle {
	n := len(variants)
	return variants[((v%n)+n)%n]
}

// VariantColor is the CSS colour of variant v of colour index i (see
// Series.Variant): ColorOf(i) for variant 0, a darker or lighter shade of
// it for the others.
func VariantColor(i, v int) string {
	base := ColorOf(i)
	mix := variantOf(v).mix
	if mix == 0 {
		return base
	}
	var out [3]int64
	for k := range out {
		c, _ := strconv.ParseInt(base[1+2*k:3+2*k], 16, 64)
		target := 0.0
		m := -mix
		if mix > 0 {
			target, m = 255, mix
		}
		out[k] = int64(float64(c) + (target-float64(c))*m + 0.5)
	}
	return fmt.Sprintf("#%02x%02x%02x", out[0], out[1], out[2])
}

// VariantDash is the SVG stroke-dasharray of variant v (see
// Series.Variant), "" for variant 0's solid line.
func VariantDash(v int) string { return variantOf(v).dash }

// stroke is the series' line colour.
func (s Series) stroke() string { return VariantColor(s.Color, s.Variant) }

// dash is the series' dash pattern: its variant's, else the one of a
// dashed series or of the palette's second turn, else none.
func (s Series) dash() string {
	if d := VariantDash(s.Variant); d != "" {
		return d
	}
	if s.Dashed || dashedIndex(s.Color) {
		return "5 3"
	}
	return ""
}
