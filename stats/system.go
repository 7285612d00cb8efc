package stats

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/process"
)

// SystemSampler measures the client machine between ticks: tritontop's own
// CPU use and cost per request, the host's CPU use, and the host's GPUs
// when built with NVML (see LocalGPUSampler). It is used by one goroutine
// at a time.
type SystemSampler struct {
	proc *process.Process
	gpus *LocalGPUSampler
	// prevProc and prevHost are the last readings; prevWall is when they
	// were taken.
	prevProc float64 // process CPU seconds (user + system)
	prevHost hostTimes
	hasHost  bool
	prevWall time.Time
	// cpus are the host CPUs the host's use is read over, when the process
	// may run on only some of them (nil: the whole host); cpuList names
	// them for SystemStats.HostCPUs.
	cpus    map[int]bool
	cpuList string
}

// hostTimes is the host's cumulative CPU seconds, busy and in total.
type hostTimes struct{ busy, total float64 }

// NewSystemSampler returns a sampler of this process and host, with its
// first reading taken now. Close releases it.
func NewSystemSampler(ctx context.Context) (*SystemSampler, error) {
	p, err := process.NewProcessWithContext(ctx, int32(os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("system sampler: open own process: %w", err)
	}
	s := &SystemSampler{proc: p}
	if s.prevProc, err = s.processCPU(ctx); err != nil {
		return nil, err
	}
	s.gpus = NewLocalGPUSampler()
	if allowed := allowedCPUs(); len(allowed) > 0 {
		if n, err := cpu.CountsWithContext(ctx, true); err == nil && len(allowed) < n {
			s.cpus = make(map[int]bool, len(allowed))
			for _, c := range allowed {
				s.cpus[c] = true
			}
			s.cpuList = cpuList(allowed)
		}
	}
	s.prevHost, err = readHostTimes(ctx, s.cpus)
	s.hasHost = err == nil
	s.prevWall = time.Now()
	return s, nil
}

// Sample returns the client's CPU use since the previous Sample (or since
// NewSystemSampler); requests is the number of requests finished in that
// span, for the CPU cost per request. CPU values that cannot be read stay
// zero; local GPUs are read now.
func (s *SystemSampler) Sample(ctx context.Context, requests int64) SystemStats {
	now := time.Now()
	out := SystemStats{NumCPU: runtime.NumCPU()}
	if s.gpus != nil {
		out.LocalGPUs = s.gpus.Sample()
	}
	wall := now.Sub(s.prevWall).Seconds()
	s.prevWall = now
	if procCPU, err := s.processCPU(ctx); err == nil {
		used := max(procCPU-s.prevProc, 0)
		s.prevProc = procCPU
		// The kernel counts CPU time in clock ticks (10 ms): over a sliver
		// of a tick one count would read as several cores. No process uses
		// more cores than the machine has.
		if wall > 0 {
			out.ProcessCPU = min(used/wall, float64(out.NumCPU))
		}
		if requests > 0 {
			out.CPUPerRequest = time.Duration(used / float64(requests) * float64(time.Second))
		}
	}
	if host, err := readHostTimes(ctx, s.cpus); err == nil {
		if s.hasHost {
			out.HostCPU = hostUse(s.prevHost, host)
			out.HostCPUs = s.cpuList
		}
		s.prevHost, s.hasHost = host, true
	}
	return out
}

// Close releases what the sampler holds (NVML, in a build with it). The
// sampler reports no local GPUs afterwards.
func (s *SystemSampler) Close() error {
	if s.gpus == nil {
		return nil
	}
	return s.gpus.Close()
}

// processCPU returns this process's CPU seconds so far.
func (s *SystemSampler) processCPU(ctx context.Context) (float64, error) {
	t, err := s.proc.TimesWithContext(ctx)
	if err != nil {
		return 0, fmt.Errorf("system sampler: own CPU times: %w", err)
	}
	return t.User + t.System, nil
}

// readHostTimes returns the host's cumulative CPU seconds over all cores.
func readHostTimes(ctx context.Context, cpus map[int]bool) (hostTimes, error) {
	ts, err := cpu.TimesWithContext(ctx, cpus != nil)
	if err != nil {
		return hostTimes{}, fmt.Errorf("system sampler: host CPU times: %w", err)
	}
	var h hostTimes
	n := 0
	for _, t := range ts {
		if cpus != nil {
			i, err := strconv.Atoi(strings.TrimPrefix(t.CPU, "cpu"))
			if err != nil || !cpus[i] {
				continue
			}
		}
		// Guest time is already part of user time on Linux, so it is left
		// out of the total to avoid counting it twice.
		idle := t.Idle + t.Iowait
		busy := t.User + t.System + t.Nice + t.Irq + t.Softirq + t.Steal
		h.busy += busy
		h.total += busy + idle
		n++
		if cpus == nil {
			break // the one line of the whole host
		}
	}
	if n == 0 {
		return hostTimes{}, fmt.Errorf("system sampler: host CPU times: none reported")
	}
	return h, nil
}

// cpuList names CPUs as taskset does: "0-3,8".
func cpuList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// hostUse is the busy share of the host's CPU time between two readings,
// 0..1.
func hostUse(prev, cur hostTimes) float64 {
	total := cur.total - prev.total
	if total <= 0 {
		return 0
	}
	return min(max((cur.busy-prev.busy)/total, 0), 1)
}
