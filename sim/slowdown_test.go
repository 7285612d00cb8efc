package sim

import (
	"math/rand/v2"
	"testing"
)

// TestSlowed: every model's compute times grow by the factor, the LLM's
// too, and the repository it came from is left as it was.
func TestSlowed(t *testing.T) {
	repo := DemoRepository()
	before := repo.Models[0].Latency
	slow, err := repo.Slowed(1.3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, m := range repo.Models {
		s := slow.Models[i]
		l, sl := m.Latency, s.Latency
		l.Jitter, sl.Jitter = 0, 0
		in, inf, out := l.durations(4, 0, rng)
		sin, sinf, sout := sl.durations(4, 0, rng)
		for _, p := range [][2]float64{{float64(in), float64(sin)}, {float64(inf), float64(sinf)}, {float64(out), float64(sout)}} {
			if p[0] == 0 && p[1] == 0 {
				continue
			}
			if r := p[1] / p[0]; r < 1.299 || r > 1.301 {
				t.Errorf("%s: slowed %v / %v = %.4f, want 1.3", m.Name, p[1], p[0], r)
			}
		}
		if m.LLM != nil {
			if s.LLM == m.LLM || s.LLM.TokenUS != 1.3*m.LLM.TokenUS || s.LLM.PrefillUS != 1.3*m.LLM.PrefillUS {
				t.Errorf("%s: LLM %+v from %+v", m.Name, s.LLM, m.LLM)
			}
		}
	}
	if repo.Models[0].Latency != before {
		t.Error("Slowed changed the repository it was given")
	}
	for _, bad := range []float64{0, -1, 101} {
		if _, err := repo.Slowed(bad); err == nil {
			t.Errorf("slowdown %g accepted", bad)
		}
	}
}
