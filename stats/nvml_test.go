package stats

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLocalGPUSampler runs in every build. Without the nvml tag it must
// report nothing; with it, it must report exactly the GPUs nvidia-smi lists,
// and none (without an error or a crash) on a host without the driver.
func TestLocalGPUSampler(t *testing.T) {
	s := NewLocalGPUSampler()
	gpus := s.Sample()
	var want []string
	if localGPUSupport {
		want = nvidiaSMIUUIDs(t)
	}
	var got []string
	for _, g := range gpus {
		got = append(got, g.UUID)
		checkLocalGPU(t, g)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("local GPUs %q, want %q (NVML built in: %v)", got, want, localGPUSupport)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if after := s.Sample(); len(after) != 0 {
		t.Errorf("Sample after Close = %+v, want none", after)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSystemSamplerLocalGPUs(t *testing.T) {
	ctx := context.Background()
	s, err := NewSystemSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Sample(ctx, 0).LocalGPUs
	if !localGPUSupport && len(got) != 0 {
		t.Errorf("LocalGPUs = %+v in a build without NVML", got)
	}
	for _, g := range got {
		checkLocalGPU(t, g)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if after := s.Sample(ctx, 0).LocalGPUs; len(after) != 0 {
		t.Errorf("LocalGPUs after Close = %+v", after)
	}
}

// checkLocalGPU checks that a GPU's reported gauges are in range.
func checkLocalGPU(t *testing.T, g GPU) {
	t.Helper()
	if g.UUID == "" || !(g.HasUtilization || g.HasMemory || g.HasPower) {
		t.Errorf("GPU %+v: no UUID or no gauge", g)
	}
	if g.HasUtilization && (g.Utilization < 0 || g.Utilization > 1) {
		t.Errorf("GPU %s utilization %v, want 0..1", g.UUID, g.Utilization)
	}
	if g.HasMemory && (g.MemoryTotal <= 0 || g.MemoryUsed < 0 || g.MemoryUsed > g.MemoryTotal) {
		t.Errorf("GPU %s memory %v of %v", g.UUID, g.MemoryUsed, g.MemoryTotal)
	}
	// Watts, not milliwatts: no single GPU draws 10 kW.
	if g.HasPower && (g.PowerW <= 0 || g.PowerW > 10000 || g.PowerLimitW > 10000) {
		t.Errorf("GPU %s power %v W, limit %v W", g.UUID, g.PowerW, g.PowerLimitW)
	}
}

// nvidiaSMIUUIDs lists the host's GPUs as nvidia-smi, an account
// independent of this package, sees them; none where nvidia-smi is missing,
// as it is wherever the driver is.
func nvidiaSMIUUIDs(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		t.Log("no nvidia-smi: expecting no local GPUs")
		return nil
	}
	out, err := exec.Command("nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader").Output()
	if err != nil {
		t.Logf("nvidia-smi failed (%v): expecting no local GPUs", err)
		return nil
	}
	var uuids []string
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			uuids = append(uuids, l)
		}
	}
	return uuids
}
