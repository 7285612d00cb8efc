package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/triton"
)

// hostileRepository is a model with two variable input dims and a -1
// output dim (the crashers' model), and a large variable FP32 input for
// the JSON body.
const hostileRepository = `{"gpus": [{"name": "sim", "memory_bytes": 1073741824}], "models": [
 {"name": "vardims", "backend": "python", "max_batch_size": 8,
  "inputs": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [-1, -1]}],
  "outputs": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [-1]}],
  "instance_group": [{"count": 1, "kind": "KIND_CPU"}], "latency": {"fixed_us": 10}, "behaviour": "classifier"},
 {"name": "wide", "backend": "python", "max_batch_size": 0,
  "inputs": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [-1]}],
  "outputs": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [1]}],
  "instance_group": [{"count": 1, "kind": "KIND_CPU"}], "latency": {"fixed_us": 10}, "behaviour": "zeros"}
]}`

// hostileMemoryBudget is the peak resident memory docs/limits.md promises
// for the simulator under the hostile bodies of this test: its baseline,
// one 50 MB body held, its JSON data copy and the tensor it decodes into,
// with the collector's headroom.
const hostileMemoryBudget = 512 << 20

// TestSimPeakMemoryUnderHostileBodies runs the simulator binary and sends
// it the bodies that used to kill it: an HTTP infer of shape
// [1,1073741824,0] (zero input elements, a 4 GiB output), and a 50 MB JSON
// infer body. The simulator answers each with 400 and stays up, and its
// peak resident set (VmHWM in /proc/PID/status, the kernel's own high-water
// mark) stays under the documented budget. The simulator runs with
// GOMEMLIMIT=384MiB, below the budget, so that the peak measures what the
// simulator holds rather than when the collector last ran.
func TestSimPeakMemoryUnderHostileBodies(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the simulator's peak memory")
	}
	bin := buildBinary(t)
	// The Go runtime's soft limit makes the collector return garbage before
	// the heap grows past it; what is still over it is memory held.
	t.Setenv("GOMEMLIMIT", "384MiB")
	repo := filepath.Join(t.TempDir(), "repo.json")
	if err := os.WriteFile(repo, []byte(hostileRepository), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, addrs, stderr := startSimCommand(t, bin, "--model-repository", repo)
	base := peakRSS(t, cmd.Process.Pid)

	post := func(model string, body io.Reader) (int, string) {
		t.Helper()
		c := &http.Client{Timeout: 2 * time.Minute}
		resp, err := c.Post("http://"+addrs["HTTP"]+"/v2/models/"+model+"/infer", "application/json", body)
		if err != nil {
			t.Fatalf("POST %s: %v (simulator stderr: %s)", model, err, stderr.String())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, string(b)
	}
	if code, body := post("vardims", strings.NewReader(`{"inputs":[{"name":"INPUT0","shape":[1,1073741824,0],"datatype":"FP32","data":[]}]}`)); code != http.StatusBadRequest {
		t.Fatalf("[1,1073741824,0]: %d %s; want 400", code, body)
	}
	// 50 MB of JSON: 25 million elements "0," with one too many, so the
	// whole body is read and decoded before it is refused.
	const n = 25 << 20
	var big bytes.Buffer
	fmt.Fprintf(&big, `{"inputs":[{"name":"INPUT0","shape":[%d],"datatype":"FP32","data":[`, n)
	big.WriteString(strings.Repeat("0,", n))
	big.WriteString(`0]}]}`)
	if code, body := post("wide", &big); code != http.StatusBadRequest || !strings.Contains(body, "Shape does not match") {
		t.Fatalf("50 MB JSON body: %d %s; want 400 with the shape mismatch", code, body)
	}
	checkLive(t, addrs["gRPC"], triton.Options{Protocol: "grpc"})
	peak := peakRSS(t, cmd.Process.Pid)
	t.Logf("simulator peak RSS: %d MiB at start, %d MiB after the hostile bodies (budget %d MiB)", base>>20, peak>>20, hostileMemoryBudget>>20)
	if peak > hostileMemoryBudget {
		t.Fatalf("simulator peak RSS %d MiB, over its documented budget of %d MiB", peak>>20, hostileMemoryBudget>>20)
	}
}

// peakRSS is a process's resident-set high-water mark in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}
