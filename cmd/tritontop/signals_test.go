package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/sim"
)

// slowSim serves a model whose every execution takes 20 s, so that a run
// stopped with a 60 s --drain drains for that long unless told otherwise.
func slowSim(t *testing.T) *sim.Server {
	return startSimWith(t, sim.ModelSpec{
		Name: "slow", Backend: "python", MaxBatchSize: 0,
		Inputs:         []sim.TensorSpec{{Name: "IN", DataType: "TYPE_FP32", Dims: []int64{4}}},
		Outputs:        []sim.TensorSpec{{Name: "OUT", DataType: "TYPE_FP32", Dims: []int64{4}}},
		InstanceGroups: []sim.InstanceGroupSpec{{Count: 4, Kind: "KIND_CPU"}},
		Latency:        sim.LatencySpec{FixedUS: 20e6}, Behaviour: sim.BehaviourIdentity,
	})
}

// startRun starts the binary with args and returns it once its stderr has
// a line with waitFor; lines gives the stderr lines after that, and
// stderr returns all of it once the process has exited.
func startRun(t *testing.T, bin, waitFor string, env []string, args ...string) (cmd *exec.Cmd, stdout *strings.Builder, lines <-chan string, stderr func() string) {
	t.Helper()
	cmd = testproc.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout = new(strings.Builder)
	cmd.Stdout = stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 1024)
	var all strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			select {
			case ch <- sc.Text():
			default:
			}
		}
	}()
	stderr = func() string { <-done; return all.String() }
	for line := range ch {
		if strings.Contains(line, waitFor) {
			return cmd, stdout, ch, stderr
		}
	}
	t.Fatalf("the run never said %q; stderr:\n%s", waitFor, stderr())
	return
}

// waitLine waits for a stderr line with want.
func waitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("stderr ended before a line with %q", want)
			}
			if strings.Contains(line, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no line with %q within 30 s", want)
		}
	}
}

// waitExit waits for cmd and returns its exit code and how long it took.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	t.Helper()
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), time.Since(began)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, time.Since(began)
	case <-time.After(limit):
		cmd.Process.Kill()
		t.Fatalf("the run did not exit within %v", limit)
		return -1, 0
	}
}

// TestSignals: a second Ctrl-C while the requests drain ends the drain at
// once and still writes the summary and the run file; SIGQUIT ends a run
// like Ctrl-C (summary, run file, no goroutine dump) unless
// TRITONTOP_SIGQUIT_DUMP is set; Ctrl-C during --start-at's wait exits 1
// and leaves no run file.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	srv := slowSim(t)
	bin := buildBinary(t)
	base := []string{"-m", "slow", "-u", srv.GRPCAddr(), "--concurrency", "4", "--headless", "--tick", "250ms", "--drain", "60s"}

	t.Run("second interrupt ends the drain", func(t *testing.T) {
		runFile := filepath.Join(t.TempDir(), "run.jsonl")
		cmd, stdout, lines, stderr := startRun(t, bin, "infer/s", nil, append(base, "--record", runFile)...)
		// The first interrupt starts the 60 s drain (the requests take
		// 20 s); the second, once the first is taken, ends it.
		cmd.Process.Signal(syscall.SIGINT)
		waitLine(t, lines, "interrupt again to stop now")
		cmd.Process.Signal(syscall.SIGINT)
		code, took := waitExit(t, cmd, 15*time.Second)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr())
		}
		run, err := record.ReadAll(runFile)
		if err != nil || run.Summary == nil || run.Truncated {
			t.Fatalf("run file: %v (summary %v)", err, run != nil && run.Summary != nil)
		}
		if !strings.Contains(stdout.String(), "Request count") || !strings.Contains(stderr(), "stopping now") {
			t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr())
		}
		t.Logf("exited %v after the second interrupt", took)
	})

	for _, tc := range []struct {
		name string
		env  []string
		dump bool
	}{{"SIGQUIT ends the run", nil, false}, {"SIGQUIT with the dump asked for", []string{sigquitDumpEnv + "=1"}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			runFile := filepath.Join(t.TempDir(), "run.jsonl")
			args := append(append([]string{}, base...), "--record", runFile, "--drain", "100ms")
			cmd, stdout, _, stderr := startRun(t, bin, "infer/s", tc.env, args...)
			cmd.Process.Signal(syscall.SIGQUIT)
			code, _ := waitExit(t, cmd, 15*time.Second)
			dumped := strings.Contains(stderr(), "goroutine ")
			if dumped != tc.dump {
				t.Fatalf("goroutine dump %v, want %v; exit %d; stderr:\n%.2000s", dumped, tc.dump, code, stderr())
			}
			if tc.dump {
				return
			}
			run, err := record.ReadAll(runFile)
			if code != 0 || err != nil || run.Summary == nil || !strings.Contains(stdout.String(), "Request count") {
				t.Fatalf("exit %d, run file %v, stdout:\n%s", code, err, stdout.String())
			}
		})
	}

	t.Run("interrupt during --start-at", func(t *testing.T) {
		runFile := filepath.Join(t.TempDir(), "run.jsonl")
		start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		cmd, _, _, stderr := startRun(t, bin, "waits until", nil, append(base, "--record", runFile, "--start-at", start)...)
		cmd.Process.Signal(syscall.SIGINT)
		code, _ := waitExit(t, cmd, 15*time.Second)
		if code != exitFail {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFail, stderr())
		}
		if _, err := os.Stat(runFile); !os.IsNotExist(err) {
			t.Fatalf("a run file was left: %v", err)
		}
	})
}
