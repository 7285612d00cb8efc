package stats

import (
	"context"
	"runtime"
	"testing"
	"time"
)

func TestSystemSamplerMeasuresOwnCPU(t *testing.T) {
	ctx := context.Background()
	s, err := NewSystemSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Burn about 300 ms of CPU on this goroutine.
	start := time.Now()
	x := 1.0
	for time.Since(start) < 300*time.Millisecond {
		for range 1000 {
			x = x*1.0000001 + 1e-9
		}
	}
	got := s.Sample(ctx, 1000)
	if x == 0 {
		t.Log(x)
	}
	if got.NumCPU != runtime.NumCPU() {
		t.Errorf("NumCPU = %d, want %d", got.NumCPU, runtime.NumCPU())
	}
	// A busy loop keeps at least a third of a core busy even on a loaded
	// machine, and one goroutine cannot use many more than one core.
	if got.ProcessCPU < 0.3 || got.ProcessCPU > float64(runtime.NumCPU()) {
		t.Errorf("ProcessCPU = %.2f cores during a busy loop", got.ProcessCPU)
	}
	// CPU per request is the process CPU of the span over 1000 requests.
	perReq := got.ProcessCPU * time.Since(start).Seconds() / 1000
	if d := got.CPUPerRequest.Seconds(); d < perReq/2 || d > perReq*2 {
		t.Errorf("CPUPerRequest = %v, want about %v", got.CPUPerRequest, time.Duration(perReq*float64(time.Second)))
	}
	if got.HostCPU <= 0 || got.HostCPU > 1 {
		t.Errorf("HostCPU = %v during a busy loop, want in (0, 1]", got.HostCPU)
	}
	if idle := s.Sample(ctx, 0); idle.CPUPerRequest != 0 {
		t.Errorf("CPUPerRequest without requests = %v, want 0", idle.CPUPerRequest)
	}
}

func TestHostUse(t *testing.T) {
	prev := hostTimes{busy: 10, total: 40}
	if got := hostUse(prev, hostTimes{busy: 13, total: 44}); got != 0.75 {
		t.Errorf("hostUse = %v, want 0.75", got)
	}
	if got := hostUse(prev, prev); got != 0 {
		t.Errorf("hostUse without time passing = %v, want 0", got)
	}
	if got := hostUse(prev, hostTimes{busy: 9, total: 41}); got != 0 {
		t.Errorf("hostUse with busy going backwards = %v, want 0", got)
	}
}
