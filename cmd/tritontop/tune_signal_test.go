package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/tune"
)

// TestTuneSIGTERMRestores: SIGTERM to tritontop tune while a trial's
// configuration is served ends the run (exit 0 or 99, never a failure)
// and the model serves its own configuration again.
func TestTuneSIGTERMRestores(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	m := batchingModel("tuned", 1, 8, 2, 0.5)
	m.InstanceGroups[0].GPUs = []int{0}
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.Repository{GPUs: []sim.GPUSpec{{}}, Models: []sim.ModelSpec{m}},
		Engine:     sim.EngineOptions{ModelControl: sim.ModelControlExplicit, StartupModels: []string{"*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client, err := triton.Dial(context.Background(), srv.GRPCAddr(), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	served := func() tune.Point {
		cfg, err := client.ModelConfig(context.Background(), "tuned", "")
		if err != nil {
			t.Fatal(err)
		}
		return tune.PointOf(cfg)
	}
	orig := served()
	cmd := testproc.Command(bin, "tune", "-m", "tuned", "-u", srv.GRPCAddr(), "--metrics-url", "http://"+srv.MetricsAddr()+"/metrics",
		"--slo", "p99:200ms", "--headless", "-p", "300", "--tick", "100ms", "-o", filepath.Join(t.TempDir(), "config.pbtxt"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); served() == orig; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no trial changed the configuration in 30 s:\n%s", out.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != exitSLO) {
			t.Errorf("exit after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("tritontop tune still runs 30 s after SIGTERM:\n%s", out.String())
	}
	if back := served(); back != orig {
		t.Errorf("after SIGTERM the model serves %v, not its own %v\n%s", back, orig, out.String())
	}
	if !strings.Contains(out.String(), "original configuration is loaded back") {
		t.Errorf("tritontop did not say the original is back:\n%s", out.String())
	}
}
