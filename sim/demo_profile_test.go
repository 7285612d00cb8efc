package sim

import (
	"math"
	"testing"
)

func TestFullBatchRate(t *testing.T) {
	repo := DemoRepository()
	byName := map[string]ModelSpec{}
	for _, m := range repo.Models {
		byName[m.Name] = m
	}
	// resnet50: one instance on each of 2 GPUs, batch 32 in 4 ms + 1 ms ×
	// 32^0.8 (16 ms) + 25 µs × 32 of input and output: 20.8 ms.
	want := 2 * 32 / (4000 + 1000*math.Pow(32, 0.8) + 25*32) * 1e6
	if got := FullBatchRate(byName["resnet50"]); math.Abs(got-want) > 1e-6 {
		t.Errorf("resnet50 %v, want %v", got, want)
	}
	for _, name := range []string{"simple", "identity", "llm"} {
		if got := FullBatchRate(byName[name]); got != 0 {
			t.Errorf("%s (no GPU batch model) %v, want 0", name, got)
		}
	}
}

func TestSizeDemoGPU(t *testing.T) {
	repo := DemoRepository()
	sized, factor, err := SizeDemoGPU(repo, "resnet50", 400)
	if err != nil {
		t.Fatal(err)
	}
	var resnet, bert, simple ModelSpec
	for _, m := range sized.Models {
		switch m.Name {
		case "resnet50":
			resnet = m
		case "bert":
			bert = m
		case "simple":
			simple = m
		}
	}
	if got := FullBatchRate(resnet); math.Abs(got-400) > 1e-6 {
		t.Errorf("sized resnet50 serves %v req/s at full batches, want 400", got)
	}
	// bert shares the GPUs: slowed by the same factor; simple runs on a
	// CPU: left as it is.
	if bert.Latency.FixedUS != 3000*factor || simple.Latency.FixedUS != 50 {
		t.Errorf("bert fixed %v (factor %v), simple %v", bert.Latency.FixedUS, factor, simple.Latency.FixedUS)
	}
	if len(sized.GPUs) != 2 || sized.GPUs[0].Name != DemoGPUName {
		t.Errorf("GPUs %+v", sized.GPUs)
	}
	// The original is untouched.
	if repo.Models[1].Latency.FixedUS != 4000 {
		t.Error("SizeDemoGPU changed its input")
	}
	// Never faster than the profile.
	if _, f, _ := SizeDemoGPU(repo, "resnet50", 1e9); f != 1 {
		t.Errorf("factor %v for a rate above the profile's, want 1", f)
	}
	for _, c := range []struct {
		model string
		rate  float64
	}{{"nope", 100}, {"simple", 100}, {"resnet50", 0}, {"resnet50", math.Inf(1)}} {
		if _, _, err := SizeDemoGPU(repo, c.model, c.rate); err == nil {
			t.Errorf("%s at %v: no error", c.model, c.rate)
		}
	}
}
