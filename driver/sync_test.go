//go:build linux

package driver

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// osThreads is this process's count of OS threads.
func osThreads(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// TestLockThreads: with LockThreads (--sync) each request in flight holds
// an OS thread of its own, so the process runs at least as many threads
// as the concurrency while the load runs; the same load without it
// (--async) runs on fewer threads than that. Both complete requests.
func TestLockThreads(t *testing.T) {
	s := startSim(t)
	c := dial(t, s, "grpc", 1)
	reqs := requests(t, c, "simple", triton.InputOptions{})
	const conc = 24
	peak := func(lock bool) (threads int, done int) {
		d, err := New(Options{Client: c, Requests: reqs, Load: load.Target{Mode: load.Concurrency, Concurrency: conc}, LockThreads: lock})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ran := make(chan error, 1)
		go func() { ran <- d.Run(ctx) }()
		deadline := time.Now().Add(20 * time.Second)
		for done < 200 && time.Now().Before(deadline) {
			select {
			case batch := <-d.Results():
				done += len(batch)
			case <-time.After(time.Second):
			}
			threads = max(threads, osThreads(t))
		}
		d.Stop(time.Second)
		go func() {
			for range d.Results() {
			}
		}()
		if err := <-ran; err != nil {
			t.Fatal(err)
		}
		return threads, done
	}
	asyncThreads, asyncDone := peak(false)
	syncThreads, syncDone := peak(true)
	if asyncDone < 200 || syncDone < 200 {
		t.Fatalf("completed %d async and %d sync requests, want 200 each", asyncDone, syncDone)
	}
	if syncThreads < conc {
		t.Errorf("--sync at concurrency %d ran on %d threads: each request in flight should hold one", conc, syncThreads)
	}
	if asyncThreads >= conc {
		t.Errorf("--async at concurrency %d ran on %d threads: goroutines should share fewer", conc, asyncThreads)
	}
	t.Logf("threads: async %d, sync %d (concurrency %d)", asyncThreads, syncThreads, conc)
}
