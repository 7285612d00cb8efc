package tune

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Preferred names a dynamic batcher's preferred batch sizes, relative to
// the configuration's max_batch_size.
type Preferred string

// Preferred batch sizes a configuration may have.
const (
	// PreferNone is a configuration without a dynamic batcher (a max
	// batch size of 1 or less).
	PreferNone Preferred = ""
	// PreferMax is [max_batch_size]: what Triton fills in when a
	// dynamic batcher names none, so a batch waits up to the queue delay
	// for a full batch.
	PreferMax Preferred = "max"
	// PreferHalf is [max_batch_size/2, max_batch_size]: half a batch goes
	// at once, without waiting out the delay.
	PreferHalf Preferred = "half"
)

// sizes is the preferred_batch_size list for max batch size b.
func (p Preferred) sizes(b int) []int32 {
	switch {
	case p == PreferHalf && b >= 4:
		return []int32{int32(b / 2), int32(b)}
	case p == PreferNone:
		return nil
	}
	return []int32{int32(b)}
}

// Point is one model configuration the search may load: the count of
// every instance group, max_batch_size, and the dynamic batcher's
// max_queue_delay_microseconds and preferred batch sizes. A max batch
// size of 1 or less has no dynamic batcher (Delay 0, PreferNone), and 0
// means a model that does not batch.
type Point struct {
	Instances int       `json:"instances"`
	MaxBatch  int       `json:"max_batch_size"`
	Delay     int       `json:"max_queue_delay_us"`
	Preferred Preferred `json:"preferred,omitempty"`
}

// Batcher reports whether the configuration has a dynamic batcher.
func (p Point) Batcher() bool { return p.MaxBatch > 1 }

// normal is p as the configuration it makes: without a batcher, no delay
// and no preferred sizes.
func (p Point) normal() Point {
	if !p.Batcher() {
		p.Delay, p.Preferred = 0, PreferNone
	}
	return p
}

// String is the configuration in a few words: "2 inst · batch 16 · delay
// 500µs · pref max".
func (p Point) String() string {
	s := strconv.Itoa(p.Instances) + " inst · batch " + strconv.Itoa(p.MaxBatch)
	if p.Batcher() {
		s += " · delay " + strconv.Itoa(p.Delay) + "µs"
		if p.Preferred == PreferHalf {
			s += " · pref half"
		}
	}
	return s
}

// Space is the grid the search moves on: each dimension's values in
// ascending order, and the concurrencies each configuration is measured at.
type Space struct {
	Instances   []int       `json:"instances"`
	MaxBatch    []int       `json:"max_batch_sizes"`
	Delays      []int       `json:"max_queue_delays_us"`
	Preferred   []Preferred `json:"preferred"`
	Concurrency []int       `json:"concurrencies"`
}

// dims are the configuration's dimensions, in the order the search
// tries them: the batch size matters most, then the instances, then the
// batcher's delay and preferred sizes.
const (
	dimBatch = iota
	dimInstances
	dimDelay
	dimPreferred
	dimCount
)

// values is the number of values of dimension d.
func (s *Space) values(d int) int {
	switch d {
	case dimBatch:
		return len(s.MaxBatch)
	case dimInstances:
		return len(s.Instances)
	case dimDelay:
		return len(s.Delays)
	}
	return len(s.Preferred)
}

// at is the point of the grid at index vector ix.
func (s *Space) at(ix [dimCount]int) Point {
	return Point{Instances: s.Instances[ix[dimInstances]], MaxBatch: s.MaxBatch[ix[dimBatch]],
		Delay: s.Delays[ix[dimDelay]], Preferred: s.Preferred[ix[dimPreferred]]}
}

// Points lists the grid's distinct configurations.
func (s *Space) Points() []Point {
	var out []Point
	seen := map[Point]bool{}
	for _, b := range s.MaxBatch {
		for _, n := range s.Instances {
			for _, d := range s.Delays {
				for _, p := range s.Preferred {
					pt := Point{Instances: n, MaxBatch: b, Delay: d, Preferred: p}.normal()
					if !seen[pt] {
						seen[pt] = true
						out = append(out, pt)
					}
				}
			}
		}
	}
	return out
}

// Size is the grid's measurements: its configurations times its
// concurrencies.
func (s *Space) Size() int { return len(s.Points()) * len(s.Concurrency) }

// nearest is the index vector of the grid point nearest p, dimension by
// dimension (in log scale for batch sizes and delays).
func (s *Space) nearest(p Point) [dimCount]int {
	var ix [dimCount]int
	ix[dimBatch] = nearestIndex(s.MaxBatch, p.MaxBatch)
	ix[dimInstances] = nearestIndex(s.Instances, p.Instances)
	ix[dimDelay] = nearestIndex(s.Delays, p.Delay)
	ix[dimPreferred] = max(0, slices.Index(s.Preferred, p.Preferred))
	return ix
}

// nearestIndex is the index of the value of vs nearest v on a log scale
// (0 nearest to 0).
func nearestIndex(vs []int, v int) int {
	best, bd := 0, -1.0
	for i, x := range vs {
		d := logDistance(x, v)
		if bd < 0 || d < bd {
			best, bd = i, d
		}
	}
	return best
}

func logDistance(a, b int) float64 {
	la, lb := logish(a), logish(b)
	if la > lb {
		return la - lb
	}
	return lb - la
}

// logish is a log scale that takes 0: log2(1+x).
func logish(x int) float64 { return math.Log2(float64(1 + max(x, 0))) }

// ParseInts reads a dimension's values: a comma-separated list (4,8,16)
// or a range LO:HI (instances: every count; batch sizes and concurrencies:
// the powers of two between). The values come back sorted and without
// repeats.
func ParseInts(flag, s string, powers bool, lo, hi int) ([]int, error) {
	var out []int
	if a, b, ok := strings.Cut(s, ":"); ok {
		x, err1 := strconv.Atoi(strings.TrimSpace(a))
		y, err2 := strconv.Atoi(strings.TrimSpace(b))
		if err1 != nil || err2 != nil || x < lo || y > hi || y < x {
			return nil, fmt.Errorf("--%s %q: give LO:HI with %d ≤ LO ≤ HI ≤ %d, or a list such as 1,2,4", flag, s, lo, hi)
		}
		for v := x; v <= y; v++ {
			if !powers || v&(v-1) == 0 || v == x || v == y {
				out = append(out, v)
			}
		}
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < lo || v > hi {
			return nil, fmt.Errorf("--%s %q: each value must be a whole number from %d to %d", flag, s, lo, hi)
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ParsePreferred reads the preferred batch sizes to try: max, half.
func ParsePreferred(s string) ([]Preferred, error) {
	var out []Preferred
	for _, f := range strings.Split(s, ",") {
		switch p := Preferred(strings.TrimSpace(f)); p {
		case PreferMax, PreferHalf:
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		default:
			return nil, fmt.Errorf("--preferred-batch-sizes %q: give max ([max_batch_size]), half ([max_batch_size/2, max_batch_size]) or both, comma-separated", s)
		}
	}
	return out, nil
}
