package svgplot

import (
	"math"
	"strconv"
	"strings"
)

// linear maps the domain [d0, d1] onto the range [r0, r1].
type linear struct{ d0, d1, r0, r1 float64 }

func (s linear) at(v float64) float64 {
	if s.d1 == s.d0 {
		return s.r0
	}
	return s.r0 + (v-s.d0)/(s.d1-s.d0)*(s.r1-s.r0)
}

// niceStep returns the 1-2-5 step (…, 0.5, 1, 2, 5, 10, 20, …) nearest
// above raw.
func niceStep(raw float64) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	f := raw / p
	switch {
	case f <= 1+1e-9:
		return p
	case f <= 2+1e-9:
		return 2 * p
	case f <= 5+1e-9:
		return 5 * p
	}
	return 10 * p
}

// niceRange widens [lo, hi] to whole 1-2-5 steps, with about target
// intervals. An empty range becomes [lo, lo+1] (or [0, 1]).
func niceRange(lo, hi float64, target int) (d0, d1, step float64) {
	if target < 1 {
		target = 1
	}
	if !(hi > lo) {
		if lo == 0 {
			hi = 1
		} else {
			hi = lo + math.Abs(lo)
		}
		if !(hi > lo) {
			hi = lo + 1
		}
	}
	step = niceStep((hi - lo) / float64(target))
	// The epsilon keeps 50/10 = 4.999…9 or 5.000…1 from adding a step.
	d0 = math.Floor(lo/step+1e-9) * step
	d1 = math.Ceil(hi/step-1e-9) * step
	return d0, d1, step
}

// ticks lists the multiples of step in [d0, d1].
func ticks(d0, d1, step float64) []float64 {
	var out []float64
	first := math.Ceil(d0/step - 1e-9)
	for i := first; ; i++ {
		v := i * step
		if v > d1+step*1e-9 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

// tickLabel writes a tick value with as many decimals as its step needs,
// in thousands (k), millions (M) or billions (G) when the axis goes that
// high.
func tickLabel(v, step, top float64) string {
	if v == 0 {
		return "0"
	}
	suffix := ""
	switch {
	case math.Abs(top) >= 1e10:
		v, step, suffix = v/1e9, step/1e9, "G"
	case math.Abs(top) >= 1e7:
		v, step, suffix = v/1e6, step/1e6, "M"
	case math.Abs(top) >= 1e4:
		v, step, suffix = v/1e3, step/1e3, "k"
	}
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', dec, 64) + suffix
}

// formatValue writes a measured value for a hover title: whole numbers from
// 100 up, three significant digits below, trailing zeros dropped.
func formatValue(v float64) string {
	if v == 0 {
		return "0"
	}
	if !finite(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	a := math.Abs(v)
	dec := 0
	if a < 100 {
		dec = 2 - int(math.Floor(math.Log10(a)))
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// withUnit joins a formatted value and its unit: "41.2 ms", "95%".
func withUnit(v, unit string) string {
	switch unit {
	case "":
		return v
	case "%":
		return v + "%"
	}
	return v + " " + unit
}

// axisTitle joins an axis label and its unit: "latency (ms)".
func axisTitle(label, unit string) string {
	switch {
	case unit == "":
		return label
	case label == "":
		return unit
	}
	return label + " (" + unit + ")"
}

// timeMode is how a time axis writes its labels, chosen by the run's span.
type timeMode int

const (
	timeSeconds timeMode = iota // "45"
	timeMinutes                 // "12:30"
	timeHours                   // "1:40:00"
)

// Spans from which a time axis switches to m:ss and to h:mm:ss labels: two
// minutes of seconds still read well, and m:ss reads well to 99:59.
const (
	minutesFrom = 120
	hoursFrom   = 6000
)

func timeModeFor(end float64) timeMode {
	switch {
	case end >= hoursFrom:
		return timeHours
	case end >= minutesFrom:
		return timeMinutes
	}
	return timeSeconds
}

func (m timeMode) axisUnit() string {
	switch m {
	case timeHours:
		return "h:mm:ss"
	case timeMinutes:
		return "m:ss"
	}
	return "s"
}

// timeSteps are the tick steps of a time axis in seconds: steps that land
// on round clock values.
var timeSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}

// timeStep picks the smallest clock step that gives at most target
// intervals over span seconds.
func timeStep(span float64, target int) float64 {
	if target < 1 {
		target = 1
	}
	if span <= 0 {
		return 1
	}
	if span < float64(target) {
		return niceStep(span / float64(target))
	}
	for _, s := range timeSteps {
		if span/s <= float64(target) {
			return s
		}
	}
	return niceStep(span/float64(target)/86400) * 86400
}

// clock writes t seconds in the mode's form. Tenths of a second are shown
// only when t has them (ticks shorter than a second).
func (m timeMode) clock(t float64) string {
	neg := t < 0
	if neg {
		t = -t
	}
	t = math.Round(t*10) / 10
	whole := math.Floor(t)
	tenths := int(math.Round((t - whole) * 10))
	frac := ""
	if tenths > 0 {
		frac = "." + strconv.Itoa(tenths)
	}
	s := int64(whole)
	var out string
	switch m {
	case timeSeconds:
		out = strconv.FormatInt(s, 10) + frac
	case timeMinutes:
		out = strconv.FormatInt(s/60, 10) + ":" + pad2(s%60) + frac
	default:
		out = strconv.FormatInt(s/3600, 10) + ":" + pad2(s/60%60) + ":" + pad2(s%60) + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// hover writes t for a hover title: "12:03", or "43s" on a seconds axis.
func (m timeMode) hover(t float64) string {
	if m == timeSeconds {
		return m.clock(t) + "s"
	}
	return m.clock(t)
}

func pad2(v int64) string {
	if v < 10 {
		return "0" + strconv.FormatInt(v, 10)
	}
	return strconv.FormatInt(v, 10)
}

// textWidth estimates the width in pixels of s set in the chart's sans-serif
// font at size px: Arial's digits are 0.556 em, and its lower case is
// narrower on average. Layout only needs it to keep labels apart.
func textWidth(s string, px float64) float64 {
	return float64(len([]rune(s))) * px * 0.56
}
