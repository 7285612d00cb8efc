package sim

import (
	"fmt"
	"math"
	"slices"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// DemoGPUName is the name the GPUs of a sized demo repository report (in
// /metrics' gpu_uuid labels' neighbour, the name a dashboard shows): they
// are no model of real hardware but one slowed to what the host can drive.
const DemoGPUName = "tritontop demo GPU (sized to this host)"

// FullBatchRate is the requests per second model m's GPU instances serve
// together when every execution runs a full batch (max_batch_size, or 1
// without batching) and no execution shares its GPU: instances × batch ÷
// (compute input + infer + output at that batch), from its LatencySpec with
// no jitter. It is 0 for a model with no KIND_GPU instance, a decoupled
// model, or one whose executions take no time.
func FullBatchRate(m ModelSpec) float64 {
	if m.Decoupled || m.LLM != nil {
		return 0
	}
	instances := 0
	for _, g := range m.InstanceGroups {
		if g.Kind != "KIND_GPU" {
			continue
		}
		n := max(g.Count, 1)
		if len(g.GPUs) > 0 {
			n *= len(g.GPUs)
		}
		instances += n
	}
	b := float64(max(m.MaxBatchSize, 1))
	l := m.Latency
	exp := l.Exponent
	if exp == 0 {
		exp = 1
	}
	us := l.FixedUS + (l.ComputeInputUS+l.ComputeOutputUS)*b
	if l.PerItemUS > 0 {
		us += l.PerItemUS * math.Pow(b, exp)
	}
	if instances == 0 || !(us > 0) {
		return 0
	}
	return float64(instances) * b / (us / 1e6)
}

// SizeDemoGPU returns repo with its GPUs slowed so that model serves at
// most rate requests per second at full batches (FullBatchRate): every
// KIND_GPU model's compute times are multiplied by one factor, the same for
// all (they share the GPUs), and the GPUs are named DemoGPUName. A repository
// already slower than rate is left as it is (factor 1): the demo never
// simulates a GPU faster than its own profile. It returns the factor; repo
// itself is not changed.
func SizeDemoGPU(repo Repository, model string, rate float64) (Repository, float64, error) {
	i := slices.IndexFunc(repo.Models, func(m ModelSpec) bool { return m.Name == model })
	if i < 0 {
		return repo, 1, fmt.Errorf("size the demo GPU: no model %s in the repository", textsafe.Quote(model))
	}
	full := FullBatchRate(repo.Models[i])
	if !(full > 0) {
		return repo, 1, fmt.Errorf("size the demo GPU: model %s runs on no simulated GPU", textsafe.Quote(model))
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		return repo, 1, fmt.Errorf("size the demo GPU: rate %v: give a positive number of requests per second", rate)
	}
	factor := max(full/rate, 1)
	out := Repository{GPUs: slices.Clone(repo.GPUs), Models: slices.Clone(repo.Models)}
	if len(out.GPUs) == 0 {
		out.GPUs = make([]GPUSpec, defaultGPUCount)
	}
	for j := range out.GPUs {
		out.GPUs[j].Name = DemoGPUName
	}
	for j, m := range out.Models {
		if !slices.ContainsFunc(m.InstanceGroups, func(g InstanceGroupSpec) bool { return g.Kind == "KIND_GPU" }) {
			continue
		}
		l := &out.Models[j].Latency
		l.FixedUS *= factor
		l.PerItemUS *= factor
		l.ComputeInputUS *= factor
		l.ComputeOutputUS *= factor
		if s := m.LLM; s != nil {
			c := *s
			c.slow(factor)
			out.Models[j].LLM = &c
		}
	}
	return out, factor, nil
}

// slow multiplies an LLM's prefill and iteration times by factor.
func (s *LLMSpec) slow(factor float64) {
	s.PrefillUS *= factor
	s.PrefillPerTokenUS *= factor
	s.TokenUS *= factor
	s.TokenPerSequenceUS *= factor
}
