//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
)

// shmLitter lists the /dev/shm objects of tritontop process pid.
func shmLitter(t *testing.T, pid int) []string {
	t.Helper()
	m, err := filepath.Glob(fmt.Sprintf("/dev/shm/tritontop_%d_*", pid))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// serverRegions are the simulator's registered regions of process pid.
func serverRegions(t *testing.T, srv *sim.Server, pid int) int {
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

// TestSharedMemoryRunLeavesNoRegion runs the binary with --shared-memory
// system against the simulator, waits until the server has served
// requests whose tensors are in the run's registered regions, then stops
// it with each signal, and with SIGKILL: nothing of it is left in
// /dev/shm, and a stopped run (not a killed one) has unregistered its
// regions from the server.
func TestSharedMemoryRunLeavesNoRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	srv := startSim(t)
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			before := simSuccesses(t, srv, "simple")
			cmd := exec.Command(bin, "-m", "simple", "-u", srv.GRPCAddr(), "--shared-memory", "system",
				"--concurrency", "2", "--headless", "--duration", "60s", "--drain", "1s")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for ctx.Err() == nil && (simSuccesses(t, srv, "simple") < before+50 || serverRegions(t, srv, pid) == 0) {
				time.Sleep(20 * time.Millisecond)
			}
			if ctx.Err() != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the run served %d requests with %d regions registered; stderr:\n%s",
					simSuccesses(t, srv, "simple")-before, serverRegions(t, srv, pid), stderr.String())
			}
			// Regions: one for the inputs, one per output of simple.
			if n := serverRegions(t, srv, pid); n != 3 {
				t.Errorf("%d regions registered, want 3 (inputs, OUTPUT0, OUTPUT1)", n)
			}
			if l := shmLitter(t, pid); len(l) != 0 {
				t.Errorf("keys left linked while the run goes on: %v", l)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			if l := shmLitter(t, pid); len(l) != 0 {
				t.Errorf("left in /dev/shm after %v: %v", sig, l)
			}
			if sig == syscall.SIGKILL {
				// A killed run cannot unregister: the server keeps the
				// mappings (not the names) until told; the next run's
				// names differ.
				_ = srv.Engine().UnregisterSystemSharedMemory("")
				return
			}
			if err != nil {
				t.Errorf("stopped by %v: %v; stderr:\n%s", sig, err, stderr.String())
			}
			if n := serverRegions(t, srv, pid); n != 0 {
				t.Errorf("%d regions still registered after %v", n, sig)
			}
		})
	}
}

// TestSharedMemoryServerGoneLeavesNoRegion: the server going away in
// the middle of a --shared-memory system run (so that the regions cannot
// even be unregistered) leaves nothing in /dev/shm.
func TestSharedMemoryServerGoneLeavesNoRegion(t *testing.T) {
	srv := startSim(t)
	done := make(chan int, 1)
	go func() {
		code, _, _ := runCLI("-m", "simple", "-u", srv.GRPCAddr(), "--shared-memory", "system",
			"--duration", "3s", "--drain", "500ms", "--headless")
		done <- code
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ctx.Err() == nil && (simSuccesses(t, srv, "simple") < 20 || serverRegions(t, srv, os.Getpid()) == 0) {
		time.Sleep(10 * time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Fatal("the run never served requests from its regions")
	}
	srv.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the run did not end")
	}
	if l := shmLitter(t, os.Getpid()); len(l) != 0 {
		t.Errorf("left in /dev/shm: %v", l)
	}
}
