//go:build unix

package stats

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func TestSystemSamplerMeasuresOwnCPU(t *testing.T) {
	ctx := context.Background()
	s, err := NewSystemSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cpu0 := rusageCPU(t)
	// Burn 200 ms of this process's CPU, however long a loaded machine
	// takes to grant it.
	x := 1.0
	for rusageCPU(t)-cpu0 < 200*time.Millisecond {
		for range 100000 {
			x = x*1.0000001 + 1e-9
		}
	}
	got := s.Sample(ctx, 1000)
	used, wall := rusageCPU(t)-cpu0, time.Since(start)
	if x == 0 {
		t.Log(x)
	}
	if got.NumCPU != runtime.NumCPU() {
		t.Errorf("NumCPU = %d, want %d", got.NumCPU, runtime.NumCPU())
	}
	// The kernel's own account (getrusage) over about the same span, within
	// the 10 ms granularity of /proc and the goroutines that ran around the
	// two readings.
	want := used.Seconds() / wall.Seconds()
	if got.ProcessCPU < want*0.75 || got.ProcessCPU > want*1.25 {
		t.Errorf("ProcessCPU = %.3f cores, getrusage says %.3f", got.ProcessCPU, want)
	}
	if perReq := used / 1000; got.CPUPerRequest < perReq*3/4 || got.CPUPerRequest > perReq*5/4 {
		t.Errorf("CPUPerRequest = %v, want about %v", got.CPUPerRequest, perReq)
	}
	if got.HostCPU <= 0 || got.HostCPU > 1 {
		t.Errorf("HostCPU = %v during a busy loop, want in (0, 1]", got.HostCPU)
	}
	if idle := s.Sample(ctx, 0); idle.CPUPerRequest != 0 {
		t.Errorf("CPUPerRequest without requests = %v, want 0", idle.CPUPerRequest)
	}
}

// rusageCPU is this process's user and system CPU time from getrusage, an
// account independent of the /proc files the sampler reads.
func rusageCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
