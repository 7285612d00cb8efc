//go:build linux

package stats

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
)

func TestCPUList(t *testing.T) {
	for _, c := range []struct {
		cpus []int
		want string
	}{
		{[]int{0}, "0"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 1, 2, 3, 8}, "0-3,8"},
		{[]int{1, 3, 5, 6}, "1,3,5-6"},
	} {
		if got := cpuList(c.cpus); got != c.want {
			t.Errorf("cpuList(%v) = %q, want %q", c.cpus, got, c.want)
		}
	}
}

// TestSystemSamplerOnTasksetCores runs the sampler in a copy of the test
// binary pinned to CPU 0 with taskset, keeping that CPU busy: the host's
// use is read over CPU 0 alone, named as such, and reads it near full
// (over the whole host of two CPUs or more it would read half at most of
// what this process adds).
func TestSystemSamplerOnTasksetCores(t *testing.T) {
	if os.Getenv("TRITONTOP_SAMPLER_CHILD") == "1" {
		ctx := context.Background()
		s, err := NewSystemSampler(ctx)
		if err != nil {
			fmt.Println("ERR", err)
			return
		}
		for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
		}
		st := s.Sample(ctx, 1)
		fmt.Printf("HOSTCPUS=%s HOST=%f\n", st.HostCPUs, st.HostCPU)
		return
	}
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: pinning to it is the whole host")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset here")
	}
	cmd := testproc.Command(taskset, "-c", "0", os.Args[0], "-test.run", "^TestSystemSamplerOnTasksetCores$")
	cmd.Env = append(os.Environ(), "TRITONTOP_SAMPLER_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var list string
	var host float64
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "HOSTCPUS="); ok {
			f := strings.Fields(rest)
			if len(f) == 2 {
				list = f[0]
				host, _ = strconv.ParseFloat(strings.TrimPrefix(f[1], "HOST="), 64)
			}
		}
	}
	t.Logf("pinned to CPU 0: host CPUs %q at %.0f%%", list, 100*host)
	if list != "0" {
		t.Fatalf("host CPUs %q, want 0; child said:\n%s", list, out)
	}
	if host < 0.8 {
		t.Errorf("CPU 0 busy with the child's loop read %.0f%% busy", 100*host)
	}
}
