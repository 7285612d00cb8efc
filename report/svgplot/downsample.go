package svgplot

import "math"

// bucketPx is the width in pixels of one downsampling bucket. Each bucket
// keeps at most its lowest and highest sample, so a line keeps its spikes
// and its noise band at one point per four pixels, and the hover points
// (one per drawn point, some 70 bytes each) stay few: a 15-series chart of
// a one-hour run is about 260 KB.
const bucketPx = 8

// downsample picks the samples to draw from values ys at positions xs
// (increasing): it splits them into segments at missing (NaN) values, so
// that a gap breaks the line, and within each segment keeps, for every
// bucket of width bucketW in x from x0, the indices of its lowest and
// highest value in order, plus each segment's first and last sample. A
// segment of samples sparser than the buckets keeps every sample.
func downsample(xs, ys []float64, x0, bucketW float64) [][]int {
	var segs [][]int
	var seg []int
	var (
		cur            = math.MinInt
		lo, hi         = -1, -1
		first, lastIdx = -1, -1
	)
	flush := func() {
		if lo < 0 {
			return
		}
		a, b := lo, hi
		if a > b {
			a, b = b, a
		}
		seg = appendIndex(seg, a)
		seg = appendIndex(seg, b)
		lo, hi = -1, -1
	}
	end := func() {
		flush()
		if lastIdx >= 0 {
			seg = appendIndex(seg, lastIdx)
		}
		if len(seg) > 0 {
			segs = append(segs, seg)
		}
		seg, cur, first, lastIdx = nil, math.MinInt, -1, -1
	}
	for i, y := range ys {
		if math.IsNaN(y) {
			end()
			continue
		}
		if first < 0 {
			first = i
			seg = append(seg, i)
		}
		b := math.MinInt + 1
		if bucketW > 0 {
			b = int(math.Floor((xs[i] - x0) / bucketW))
		}
		if b != cur {
			flush()
			cur = b
		}
		if lo < 0 || y < ys[lo] {
			lo = i
		}
		if hi < 0 || y > ys[hi] {
			hi = i
		}
		lastIdx = i
	}
	end()
	return segs
}

// appendIndex appends i unless it is already the last index kept.
func appendIndex(seg []int, i int) []int {
	if n := len(seg); n > 0 && seg[n-1] == i {
		return seg
	}
	return append(seg, i)
}
