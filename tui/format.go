package tui

import (
	"math"
	"strconv"
	"time"
)

// fmtDur formats a latency with three significant digits and its unit:
// 850µs, 3.42ms, 38.2ms, 382ms, 1.23s.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Millisecond:
		return sig3(float64(d)/1e3) + "µs"
	case d < time.Second:
		return sig3(float64(d)/1e6) + "ms"
	default:
		return sig3(float64(d)/1e9) + "s"
	}
}

// fmtMs formats a latency in milliseconds without the unit, for tables
// whose header names the unit.
func fmtMs(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	return sig3(float64(d) / 1e6)
}

// sig3 formats v ≥ 0 with three significant digits (at least the integer
// part): 0.0123, 3.42, 38.2, 382, 3821.
func sig3(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// fmtRate formats a per-second rate: 0.5, 12.3, 1,284, 12,840, 128k, 1.3M.
func fmtRate(v float64) string {
	switch {
	case v < 0 || math.IsNaN(v):
		return "–"
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v < 100_000:
		return fmtInt(int64(math.Round(v)))
	case v < 10_000_000:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k"
	default:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	}
}

// fmtInt formats n with thousands separators.
func fmtInt(n int64) string {
	if n < 0 {
		return "-" + fmtInt(-n)
	}
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// fmtPct formats a 0..1 share as a whole percentage, or with one decimal
// below 10 %.
func fmtPct(f float64) string {
	p := f * 100
	if p > 0 && p < 10 {
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + "%"
}

// fmtGB formats bytes in GB (10^9, as nvidia-smi's marketing sizes) with
// three significant digits.
func fmtGB(b float64) string {
	return sig3(b / 1e9)
}

// fmtElapsed formats run time as mm:ss, or h:mm:ss past an hour.
func fmtElapsed(d time.Duration) string {
	s := int64(d / time.Second)
	h, m, sec := s/3600, (s/60)%60, s%60
	two := func(v int64) string {
		if v < 10 {
			return "0" + strconv.FormatInt(v, 10)
		}
		return strconv.FormatInt(v, 10)
	}
	if h > 0 {
		return strconv.FormatInt(h, 10) + ":" + two(m) + ":" + two(sec)
	}
	return two(m) + ":" + two(sec)
}

// fmtWindow names a window span: "last 10 s", "last 1 min", "whole run".
func fmtWindow(d time.Duration) string {
	switch {
	case d <= 0:
		return "whole run"
	case d%time.Minute == 0:
		return "last " + strconv.FormatInt(int64(d/time.Minute), 10) + " min"
	default:
		return "last " + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
	}
}

// niceCeil rounds v up to a round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6
// or 8 times a power of ten) for chart scales.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range [...]float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// fmtCores formats CPU use given in cores: a share of one core below one
// ("7.0%"), cores above ("15.2 cores").
func fmtCores(c float64) string {
	if c < 1 {
		return fmtPct(c)
	}
	return strconv.FormatFloat(c, 'f', 1, 64) + " cores"
}
