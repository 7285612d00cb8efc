package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/triton"
)

// TestSimCommandServesAndStopsOnSIGINT builds the real binary, runs
// `tritontop sim` on free ports, talks to it, and stops it with SIGINT.
func TestSimCommandServesAndStopsOnSIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "tritontop")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = os.Environ()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "sim", "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	addrs := map[string]string{}
	lines := bufio.NewScanner(stdout)
	ready := false
	for !ready && lines.Scan() {
		line := lines.Text()
		if line == "simulated Triton (tritontop simulator) ready" {
			ready = true
			break
		}
		if f := strings.Fields(line); len(f) == 2 {
			addrs[f[0]] = f[1]
		}
	}
	if !ready || addrs["gRPC"] == "" || addrs["HTTP"] == "" || addrs["metrics"] == "" {
		t.Fatalf("startup output: %v (ready %v); stderr: %s", addrs, ready, stderr.String())
	}
	go func() {
		for lines.Scan() {
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, proto := range []string{"grpc", "http"} {
		addr := addrs["gRPC"]
		if proto == "http" {
			addr = addrs["HTTP"]
		}
		c, err := triton.Dial(ctx, addr, triton.Options{Protocol: proto})
		if err != nil {
			t.Fatalf("Dial %s %s: %v", proto, addr, err)
		}
		live, err := c.ServerLive(ctx)
		c.Close()
		if err != nil || !live {
			t.Fatalf("%s ServerLive = %v, %v", proto, live, err)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGINT: %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("tritontop sim did not stop within 15 s of SIGINT")
	}
}

func TestSimCommandBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"--grpc-port", "70000"},
		{"--error-rate", "2"},
		{"--stall-after", "1s"},
		{"extra"},
	} {
		var out, errOut strings.Builder
		code := runSim(args, &out, &errOut)
		msg := errOut.String()
		if code != 2 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "tritontop sim: ") {
			t.Errorf("runSim(%q) = %d, stderr %q; want 2 and one line", args, code, msg)
		}
	}
	var out, errOut strings.Builder
	if code := runSim([]string{"--model-repository", filepath.Join(t.TempDir(), "missing.json"), "--grpc-port", "0", "--http-port", "0", "--metrics-port", "0"}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "missing.json") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("missing repository: code %d, stderr %q", code, errOut.String())
	}
}
