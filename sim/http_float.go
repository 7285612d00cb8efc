package sim

import (
	"strconv"
)

// appendRapidJSONDouble writes a finite double as rapidjson's Writer does
// (internal::dtoa: the shortest digits, then Prettify): 1.0 and 1e20 as
// "1.0" and "100000000000000000000.0", 0.001 as "0.001", 1e-7 as "1e-7",
// 1.5e300 as "1.5e300". Triton's HTTP frontend writes FP32 and FP64
// tensor data and double parameters so.
func appendRapidJSONDouble(b []byte, f float64) []byte {
	if f == 0 {
		if 1/f < 0 {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	// Shortest digits d1..dn and exponent: f = 0.d1...dn × 10^kk.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	mant, exp, _ := cutByte(e, 'e')
	digits := make([]byte, 0, 17)
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	x, _ := strconv.Atoi(string(exp))
	length := len(digits)
	kk := x + 1 // f = 0.digits × 10^kk
	k := kk - length
	switch {
	case k >= 0 && kk <= 21:
		b = append(b, digits...)
		for range k {
			b = append(b, '0')
		}
		return append(b, ".0"...)
	case kk > 0 && kk <= 21:
		b = append(b, digits[:kk]...)
		b = append(b, '.')
		return append(b, digits[kk:]...)
	case kk > -6 && kk <= 0:
		b = append(b, "0."...)
		for range -kk {
			b = append(b, '0')
		}
		return append(b, digits...)
	case length == 1:
		b = append(b, digits[0], 'e')
	default:
		b = append(b, digits[0], '.')
		b = append(b, digits[1:]...)
		b = append(b, 'e')
	}
	return strconv.AppendInt(b, int64(kk-1), 10)
}

// cutByte splits b around the first c.
func cutByte(b []byte, c byte) (before, after []byte, found bool) {
	for i, x := range b {
		if x == c {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}
