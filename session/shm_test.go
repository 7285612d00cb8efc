//go:build linux

package session_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// The tests of this file are not parallel: /dev/shm names carry the
// process's id, so a run of another test of this process with shared
// memory would look like litter of theirs.

// shmHelperEnv, set in the environment of this test binary run again, makes
// TestSharedMemoryHelperProcess run a --shared-memory system load against
// the simulator at the address it holds, until it is killed.
const shmHelperEnv = "TRITONTOP_SESSION_TEST_SHM_RUN"

// shmErrors finds failed requests in a run's progress line.
var shmErrors = regexp.MustCompile(`errors [1-9]`)

// shmLitter lists the /dev/shm objects of the tritontop process pid.
func shmLitter(t *testing.T, pid int) []string {
	t.Helper()
	m, err := filepath.Glob(fmt.Sprintf("/dev/shm/tritontop_%d_*", pid))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// shmServerRegions are the simulator's registered regions of process pid.
func shmServerRegions(t *testing.T, srv *sim.Server, pid int) int {
	t.Helper()
	regions, err := srv.Engine().SystemSharedMemoryStatus("")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range regions {
		if strings.HasPrefix(r.Name, fmt.Sprintf("tritontop_%d_", pid)) {
			n++
		}
	}
	return n
}

// shmSuccesses is the simulator's count of simple's successes.
func shmSuccesses(t *testing.T, srv *sim.Server) uint64 {
	t.Helper()
	st, err := srv.Engine().ModelStatistics("simple", "")
	if err != nil {
		t.Fatal(err)
	}
	return st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount()
}

// shmConfig is a --shared-memory system run of simple on srv.
func shmConfig(srv *sim.Server) session.Config {
	c := quickConfig(srv, "simple")
	c.PerfAnalyzer.SharedMemory = "system"
	c.Concurrency, c.Drain = 2, time.Second
	return c
}

// shmWaitServing waits until the run of process pid has had 50 requests
// served since before, with its regions registered.
func shmWaitServing(t *testing.T, srv *sim.Server, pid int, before uint64, stderr func() string) {
	t.Helper()
	if !eventually(t, 30*time.Second, func() bool {
		return shmSuccesses(t, srv) >= before+50 && shmServerRegions(t, srv, pid) > 0
	}) {
		t.Fatalf("the run served %d requests with %d regions registered; stderr:\n%s",
			shmSuccesses(t, srv)-before, shmServerRegions(t, srv, pid), stderr())
	}
	// Regions: one for the inputs, one per output of simple.
	if n := shmServerRegions(t, srv, pid); n != 3 {
		t.Errorf("%d regions registered, want 3 (inputs, OUTPUT0, OUTPUT1)", n)
	}
	if l := shmLitter(t, pid); len(l) != 0 {
		t.Errorf("keys left linked while the run goes on: %v", l)
	}
}

// TestSharedMemoryHelperProcess is not a test of its own: run again by
// TestSharedMemoryRunLeavesNoRegion (shmHelperEnv), this test binary is a
// process that runs a --shared-memory system load until it is killed.
func TestSharedMemoryHelperProcess(t *testing.T) {
	addr := os.Getenv(shmHelperEnv)
	if addr == "" {
		t.Skip("a helper process of TestSharedMemoryRunLeavesNoRegion")
	}
	c := session.Defaults()
	c.Model, c.URL, c.Headless, c.Tick = "simple", addr, true, quickTick
	c.PerfAnalyzer.SharedMemory, c.Concurrency, c.Duration = "system", 2, time.Minute
	if err := session.Run(context.Background(), c, os.Stdout, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// TestSharedMemoryRunLeavesNoRegion runs a --shared-memory system load
// against the simulator, waits until the server has served requests whose
// tensors are in the run's registered regions, then stops it, as SIGINT,
// SIGTERM and SIGHUP do (the command line cancels the run's context on
// each), and kills a process running one with SIGKILL: nothing of either
// is left in /dev/shm, and the stopped run (not the killed one) has
// unregistered its regions from the server.
func TestSharedMemoryRunLeavesNoRegion(t *testing.T) {
	srv := startSim(t)
	t.Run("stop", func(t *testing.T) {
		pid := os.Getpid()
		r := workersStart(t, shmConfig(srv))
		shmWaitServing(t, srv, pid, 0, r.stderr.String)
		r.stop()
		if err := r.wait(t); err != nil {
			t.Errorf("stopped: %v; stderr:\n%s", err, r.stderr.String())
		}
		if l := shmLitter(t, pid); len(l) != 0 {
			t.Errorf("left in /dev/shm after the stop: %v", l)
		}
		if n := shmServerRegions(t, srv, pid); n != 0 {
			t.Errorf("%d regions still registered after the stop", n)
		}
	})
	t.Run("SIGKILL", func(t *testing.T) {
		before := shmSuccesses(t, srv)
		cmd := exec.Command(os.Args[0], "-test.run=^TestSharedMemoryHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), shmHelperEnv+"="+srv.GRPCAddr())
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-done
			done <- nil
		})
		pid := cmd.Process.Pid
		shmWaitServing(t, srv, pid, before, func() string { return "(the helper process's, after it ends)" })
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-done
		done <- nil
		if l := shmLitter(t, pid); len(l) != 0 {
			t.Errorf("left in /dev/shm after SIGKILL: %v\n%s", l, stderr.String())
		}
		// A killed run cannot unregister: the server keeps the mappings
		// (not the names) until told; the next run's names differ.
		_ = srv.Engine().UnregisterSystemSharedMemory("")
	})
}

// TestSharedMemoryServerGoneLeavesNoRegion: the server going away in the
// middle of a --shared-memory system run (so that the regions cannot even
// be unregistered) leaves nothing in /dev/shm.
func TestSharedMemoryServerGoneLeavesNoRegion(t *testing.T) {
	srv := startSim(t)
	c := shmConfig(srv)
	c.Duration, c.Drain = 0, 500*time.Millisecond
	r := workersStart(t, c)
	shmWaitServing(t, srv, os.Getpid(), 0, r.stderr.String)
	srv.Close()
	// The run goes on without its server until its requests fail, then
	// stops.
	if !eventually(t, 10*time.Second, func() bool { return shmErrors.MatchString(r.stderr.String()) }) {
		t.Logf("no request failed within 10 s of the server's end:\n%s", r.stderr.String())
	}
	r.stop()
	r.wait(t)
	if l := shmLitter(t, os.Getpid()); len(l) != 0 {
		t.Errorf("left in /dev/shm: %v", l)
	}
}
