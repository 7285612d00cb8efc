package capture_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritontop/tritontop/capture"
	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/trace"
	"github.com/tritontop/tritontop/triton"
)

// runCapture runs capture.Run with c until the test stops it, and returns
// the address it listens on and a stop that ends it, waits for it and
// gives its error and what it printed.
func runCapture(t *testing.T, c capture.Config) (addr string, stop func() (error, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var stdout bytes.Buffer
	var err error
	var wg sync.WaitGroup
	c.Ready = func(a string) { ready <- a }
	wg.Go(func() {
		err = capture.Run(ctx, c, &stdout)
		close(ready)
	})
	a, ok := <-ready
	if !ok {
		cancel()
		wg.Wait()
		t.Fatalf("the capture did not start: %v", err)
	}
	var once sync.Once
	stop = func() (error, string) {
		once.Do(func() { cancel(); wg.Wait() })
		return err, stdout.String()
	}
	t.Cleanup(func() { stop() })
	return a, stop
}

// runSimple sends n inference requests of the simulator's simple model to
// addr over protocol, as tritontop's driver sends them (prepared once).
func runSimple(t *testing.T, addr, protocol string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := triton.Dial(ctx, addr, triton.Options{Protocol: protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	md, err := c.ModelMetadata(ctx, "simple", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.ModelConfig(ctx, "simple", "")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Prepare(reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := c.Send(ctx, p); err != nil {
			t.Fatalf("a request through the capture: %v", err)
		}
	}
}

// TestCaptureWithTensors: with Tensors (--with-tensors) each input's
// contents are in the capture, as many bytes as it says, over gRPC and
// over HTTP; the capture's last line counts the requests written.
func TestCaptureWithTensors(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	for _, tc := range []struct {
		protocol, upstream string
		http               bool
	}{
		{"grpc", srv.GRPCAddr(), false},
		{"http", srv.HTTPAddr(), true},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			t.Parallel()
			const n = 25
			out := filepath.Join(t.TempDir(), "t.jsonl")
			addr, stop := runCapture(t, capture.Config{Listen: "127.0.0.1:0", Upstream: tc.upstream, Out: out,
				HTTP: tc.http, Tensors: true})
			runSimple(t, addr, tc.protocol, n)
			if err, stdout := stop(); err != nil || !strings.Contains(stdout, fmt.Sprintf(", %d inference requests written to %s\n", n, out)) {
				t.Fatalf("capture: %v\n%s", err, stdout)
			}
			tr, err := trace.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Header.Tensors || len(tr.Requests) < 20 || len(tr.Requests) != n {
				t.Fatalf("header %+v, %d requests; %d sent", tr.Header, len(tr.Requests), n)
			}
			for _, r := range tr.Requests {
				for _, in := range r.Inputs {
					if int64(len(in.Data)) != in.Bytes || in.Bytes != 64 {
						t.Fatalf("input %s: %d bytes of data, %d said", in.Name, len(in.Data), in.Bytes)
					}
				}
			}
			if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the capture's mode: %v, %v; want 0600 (it holds the users' data)", fi.Mode(), err)
			}
		})
	}
}

// TestCaptureBadInput: missing or bad settings are one line and a usage
// error (exit 2), refused before anything is served, and an existing
// output file is never overwritten.
func TestCaptureBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "x.jsonl")
	if err := os.WriteFile(existing, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "y.jsonl")
	for _, tc := range []struct {
		c    capture.Config
		want string
	}{
		{capture.Config{Out: "x"}, "no --upstream"},
		{capture.Config{Upstream: "127.0.0.1:1"}, "no -o FILE"},
		{capture.Config{Upstream: "127.0.0.1:1", Out: existing, Listen: "127.0.0.1:0"}, "exists: a capture never overwrites"},
		{capture.Config{Upstream: "127.0.0.1:1", Out: fresh, Listen: "nowhere:abc"}, "cannot listen on nowhere:abc"},
		{capture.Config{Upstream: "127.0.0.1:1", Out: filepath.Join(dir, "none", "z.jsonl"), Listen: "127.0.0.1:0"}, "there is no directory"},
		{capture.Config{Upstream: "127.0.0.1:1", Out: dir, Listen: "127.0.0.1:0"}, "it is a directory"},
	} {
		tc.c.Ready = func(addr string) { t.Errorf("%+v: listening on %s", tc.c, addr) }
		var stdout bytes.Buffer
		err := capture.Run(context.Background(), tc.c, &stdout)
		if !usage.Is(err) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || stdout.Len() > 0 {
			t.Errorf("%+v: %v (stdout %q); want a usage error of one line with %q", tc.c, err, stdout.String(), tc.want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep\n" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Errorf("a capture that could not listen left %s behind", fresh)
	}
}
