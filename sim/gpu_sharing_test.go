package sim

import (
	"testing"
	"time"
)

// sharingGPU is a bare GPU with the given overlap, and execs makes n
// instances that can run on it.
func sharingGPU(overlap float64) *gpu {
	return &gpu{overlap: overlap}
}

func execs(n int) []*instance {
	ins := make([]*instance, n)
	for i := range ins {
		ins[i] = &instance{wake: make(chan struct{}, 1)}
	}
	return ins
}

const ms = int64(time.Millisecond)

// TestGPUSharingArithmetic plays executions on a GPU on a made-up clock
// (no sleeping) and checks when each is done, worked out by hand.
func TestGPUSharingArithmetic(t *testing.T) {
	t.Run("alone an execution takes its solo time", func(t *testing.T) {
		g, in := sharingGPU(DefaultGPUOverlap), execs(1)
		done, left := g.begin(0, 10*time.Millisecond, in[0])
		if left != 10*time.Millisecond {
			t.Errorf("left %v at start, want 10ms", left)
		}
		if l := g.left(4*ms, done); l != 6*time.Millisecond {
			t.Errorf("left %v at 4ms, want 6ms", l)
		}
		if l := g.left(10*ms, done); l != 0 {
			t.Errorf("left %v at 10ms, want 0", l)
		}
		if g.end(10*ms, in[0]) {
			t.Error("a lone execution says it shared the GPU")
		}
		if g.busy != 10*ms {
			t.Errorf("busy %v, want 10ms", time.Duration(g.busy))
		}
	})
	// Rows: two executions of 10 ms solo each, the second starting at
	// start; when each ends.
	for _, tt := range []struct {
		name             string
		overlap          float64
		start            int64
		firstEnd, second int64
	}{
		// Time slicing: together each gets half the GPU, 20 ms for both.
		{"time slicing, together", 0, 0, 20 * ms, 20 * ms},
		// The first runs 5 ms alone (5 left), then at half speed: 10 ms
		// more, ending at 15; the second got 5 ms of work by then and
		// runs its last 5 alone, ending at 20.
		{"time slicing, staggered", 0, 5 * ms, 15 * ms, 20 * ms},
		// Overlap 0.2: each runs 1.8 times slower while both run.
		{"overlap 0.2, together", 0.2, 0, 18 * ms, 18 * ms},
		// Overlap 1: no slowdown.
		{"overlap 1, together", 1, 0, 10 * ms, 10 * ms},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, in := sharingGPU(tt.overlap), execs(2)
			d := 10 * time.Millisecond
			doneA, _ := g.begin(0, d, in[0])
			doneB, leftB := g.begin(tt.start, d, in[1])
			if want := time.Duration(tt.second); tt.start == 0 && leftB != want {
				t.Errorf("second's left %v at its start, want %v", leftB, want)
			}
			if l := g.left(tt.start, doneA); l != time.Duration(tt.firstEnd-tt.start) {
				t.Errorf("first's left %v at %v, want %v", l, time.Duration(tt.start), time.Duration(tt.firstEnd-tt.start))
			}
			if l := g.left(tt.firstEnd, doneA); l != 0 {
				t.Errorf("first's left %v at %v, want 0", l, time.Duration(tt.firstEnd))
			}
			if !g.end(tt.firstEnd, in[0]) {
				t.Error("the first says it ran alone")
			}
			select {
			case <-in[1].wake:
			default:
				t.Error("the first's end did not wake the second")
			}
			if l := g.left(tt.firstEnd, doneB); l != time.Duration(tt.second-tt.firstEnd) {
				t.Errorf("second's left %v at %v, want %v", l, time.Duration(tt.firstEnd), time.Duration(tt.second-tt.firstEnd))
			}
			if !g.end(tt.second, in[1]) {
				t.Error("the second says it ran alone")
			}
			// Busy while any ran: never more than the wall time.
			if g.busy != tt.second {
				t.Errorf("busy %v, want %v", time.Duration(g.busy), time.Duration(tt.second))
			}
		})
	}
	t.Run("three at once with overlap 0.2", func(t *testing.T) {
		g, in := sharingGPU(0.2), execs(3)
		for i := range in {
			g.begin(0, 10*time.Millisecond, in[i])
		}
		// slowdown 1 + 2·0.8 = 2.6.
		if l := g.left(0, 10*float64(ms)); l != 26*time.Millisecond {
			t.Errorf("left %v, want 26ms", l)
		}
	})
	t.Run("an idle GPU starts afresh", func(t *testing.T) {
		g, in := sharingGPU(0), execs(1)
		g.begin(0, 10*time.Millisecond, in[0])
		g.end(10*ms, in[0])
		done, left := g.begin(50*ms, 3*time.Millisecond, in[0])
		if left != 3*time.Millisecond || g.left(53*ms, done) != 0 {
			t.Errorf("after idle: left %v at start, %v at the end", left, g.left(53*ms, done))
		}
		if g.end(53*ms, in[0]) {
			t.Error("shared flag left over from an earlier execution")
		}
		if g.busy != 13*ms {
			t.Errorf("busy %v, want 13ms", time.Duration(g.busy))
		}
	})
}
