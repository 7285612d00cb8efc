package interop_test

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/trace"
)

// TestCaptureReplay puts tritontop's capture proxy (the built binary's
// `tritontop capture`) in front of a real Triton, over gRPC and over HTTP
// (--http), runs Triton's perf_analyzer through it, stops the capture
// with SIGINT, and replays the capture against a fresh server:
//
//   - perf_analyzer sends 1000 requests (--request-count), and Triton
//     serves those 1000;
//   - the capture holds every request perf_analyzer sent, and nothing else
//     as a request: as many as Triton counted over perf_analyzer's run,
//     each identity_int32's INPUT0 INT32 [1 16] (perf_analyzer's -b 1 and
//     --shape), with the protocol it came over; the proxy's own count, in
//     its last line, is the same;
//   - the replay (Shape.Trace) sends them all: the fresh server counts
//     exactly the capture's requests, and the replay's counts and server
//     times are its (checkExact).
func TestCaptureReplay(t *testing.T) {
	t.Parallel()
	bin := buildTritontop(t)
	for _, protocol := range []string{"grpc", "http"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			wallTime(t)
			srv := interop.Start(t, interop.Options{Models: []string{identity}})
			upstream := srv.GRPC
			args := []string{"capture", "--listen", "127.0.0.1:0", "-o", filepath.Join(t.TempDir(), "traffic.jsonl")}
			if protocol == "http" {
				upstream, args = srv.HTTP, append(args, "--http")
			}
			px := startCapture(t, bin, append(args, "--upstream", upstream))
			before := srv.Statistics(t, identity)
			// --request-count: 1000 requests and done, where a busy host
			// may keep time windows from ever agreeing.
			pa := srv.PerfAnalyzerAt(t, protocol, px.addr, "-m", identity, "--shape", "INPUT0:16", "--concurrency-range", "2",
				"--request-count", "1000")
			d := settled(t, srv, identity, before, 1000)
			t.Logf("perf_analyzer through the proxy: %+v; Triton: %v", pa.Server, d)
			last := px.stop(t)
			tr, err := trace.ReadFile(px.file)
			if err != nil {
				t.Fatalf("the capture: %v", err)
			}
			if d.Inference.Success.Count != 1000 {
				t.Errorf("Triton served %d requests through the proxy; perf_analyzer sends 1000", d.Inference.Success.Count)
			}
			checkCapture(t, tr, protocol, d.Inference.Success.Count)
			if want := " " + strconv.FormatUint(d.Inference.Success.Count, 10) + " inference requests written to " + px.file; !strings.Contains(last, want) {
				t.Errorf("the capture's last line %q does not say %q", last, want)
			}

			fresh := interop.Start(t, interop.Options{Models: []string{identity}})
			c := configFor(fresh, protocol, identity)
			c.Duration, c.Model, c.Shape.Trace = 0, "", px.file
			run, rd, _ := measure(t, fresh, identity, c)
			checkExact(t, "the replay of the capture", run.Summary.Client, run.Summary.Server, rd)
			if rd.Inference.Success.Count != uint64(len(tr.Requests)) {
				t.Errorf("the replay: Triton served %d requests of the capture's %d", rd.Inference.Success.Count, len(tr.Requests))
			}
		})
	}
}

// checkCapture holds a capture to the requests Triton served through it.
func checkCapture(t *testing.T, tr *trace.Trace, protocol string, served uint64) {
	t.Helper()
	if uint64(len(tr.Requests)) != served {
		t.Errorf("the capture holds %d requests; Triton served %d through the proxy", len(tr.Requests), served)
	}
	for i, r := range tr.Requests {
		in := r.Inputs
		if r.Model != identity || r.Protocol != protocol || len(in) != 1 || in[0].Name != "INPUT0" || in[0].Datatype != "INT32" ||
			len(in[0].Shape) != 2 || in[0].Shape[0] != 1 || in[0].Shape[1] != 16 {
			t.Fatalf("captured request %d is %+v; perf_analyzer sent %s INPUT0 INT32 [1 16] over %s", i, r, identity, protocol)
		}
	}
}

// capture is a running `tritontop capture`: where it listens, and the file
// it writes.
type capture struct {
	cmd        *exec.Cmd
	addr, file string
	out        *bufio.Scanner
}

// startCapture starts bin with args (a capture command line with -o and
// --listen 127.0.0.1:0) and reads the address it listens on from its
// first line.
func startCapture(t *testing.T, bin string, args []string) *capture {
	t.Helper()
	cmd := testproc.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	px := &capture{cmd: cmd, out: bufio.NewScanner(stdout)}
	for i, a := range args {
		if a == "-o" {
			px.file = args[i+1]
		}
	}
	// capturing grpc traffic: 127.0.0.1:PORT -> UPSTREAM, writing FILE (tensors: false)
	if !px.out.Scan() {
		t.Fatalf("tritontop capture said nothing: %s", stderr.String())
	}
	first := px.out.Text()
	_, rest, ok := strings.Cut(first, " traffic: ")
	if px.addr, _, _ = strings.Cut(rest, " -> "); !ok || px.addr == "" {
		t.Fatalf("tritontop capture's first line: %q", first)
	}
	return px
}

// stop ends the capture with SIGINT, as Ctrl-C does, waits for it to exit
// 0, and returns its last line.
func (px *capture) stop(t *testing.T) string {
	t.Helper()
	if err := px.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	type exit struct {
		last string
		err  error
	}
	done := make(chan exit, 1)
	go func() {
		var e exit
		for px.out.Scan() {
			e.last = px.out.Text()
		}
		e.err = px.cmd.Wait()
		done <- e
	}()
	select {
	case e := <-done:
		if e.err != nil {
			t.Fatalf("tritontop capture after SIGINT: %v (last line %q)", e.err, e.last)
		}
		return e.last
	case <-time.After(30 * time.Second):
		t.Fatal("tritontop capture did not exit within 30 s of SIGINT")
	}
	return ""
}

// buildTritontop builds cmd/tritontop into the test's directory and returns
// the binary; it skips the test where the go command is missing.
func buildTritontop(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build tritontop with")
	}
	bin := filepath.Join(t.TempDir(), "tritontop")
	begin := time.Now()
	cmd := testproc.Command(goBin, "build", "-o", bin, "../cmd/tritontop")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built tritontop in %v", time.Since(begin).Round(time.Millisecond))
	return bin
}
