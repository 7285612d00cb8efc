package interop_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
)

// TestSharedMemoryRun runs tritontop with its inputs and outputs in system
// shared memory (PerfAnalyzer.SharedMemory "system", --shared-memory
// system) against a real Triton, over gRPC and HTTP:
//
//   - started without --allow-client-shm=true, Triton refuses the
//     registration: the run is refused before any load with one line that
//     keeps the server's message and says to start the server with
//     --allow-client-shm=true (the right hint: not that the server must be
//     on this host), and the exit code is the one the code gives a
//     refusal, 2; Triton served no request;
//   - started with it, the run's counts and server times are Triton's
//     (checkExact), and at its end no region of the run is left in
//     /dev/shm nor registered on the server.
func TestSharedMemoryRun(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"grpc", "http"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			wallTime(t)
			refusing := interop.Start(t, interop.Options{Models: []string{identity}})
			allowing := interop.Start(t, interop.Options{Models: []string{identity}, AllowClientShm: true})
			shmBefore := shmFiles(t)

			c := configFor(refusing, protocol, identity)
			c.Shapes, c.Concurrency, c.PerfAnalyzer.SharedMemory = []string{"INPUT0:16"}, 2, "system"
			before := refusing.Statistics(t, identity)
			err, stdout, stderr := runConfig(t, c)
			msg := fmt.Sprint(err)
			t.Logf("without --allow-client-shm: exit %d: %s\nstdout: %s\nstderr: %s", exitCode(err), msg, stdout, stderr)
			oneLine(t, "the refusal", msg)
			if code := exitCode(err); code != 2 ||
				!strings.Contains(msg, "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.") ||
				!strings.HasSuffix(msg, "start the server with --allow-client-shm=true") || strings.Contains(msg, "this host") {
				t.Errorf("without --allow-client-shm: exit %d, %q", code, msg)
			}
			if d := interop.Delta(before, refusing.Statistics(t, identity)); d.Inference.Success.Count+d.Inference.Fail.Count != 0 {
				t.Errorf("the refused run sent requests: %v", d)
			}

			c = configFor(allowing, protocol, identity)
			c.Shapes, c.Concurrency, c.PerfAnalyzer.SharedMemory = []string{"INPUT0:16"}, 2, "system"
			run, d, _ := measure(t, allowing, identity, c)
			checkExact(t, "the run in shared memory", run.Summary.Client, run.Summary.Server, d)
			if regions := allowing.SystemSharedMemory(t); len(regions) != 0 {
				t.Errorf("regions left registered on the server: %v", regions)
			}
			// Other tests of this process place regions too: a file of
			// theirs goes with their placement, one of this run's stays.
			var left []string
			if !eventually(10*time.Second, func() bool { left = newFiles(shmBefore, shmFiles(t)); return len(left) == 0 }) {
				t.Errorf("left in /dev/shm: %v", left)
			}
		})
	}
}

// shmFiles lists tritontop's files in /dev/shm made by this process.
func shmFiles(t *testing.T) []string {
	t.Helper()
	l, err := filepath.Glob(fmt.Sprintf("/dev/shm/tritontop_%d_*", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// newFiles is what after has that before had not.
func newFiles(before, after []string) []string {
	var out []string
	for _, f := range after {
		found := false
		for _, b := range before {
			found = found || b == f
		}
		if !found {
			out = append(out, f)
		}
	}
	return out
}
