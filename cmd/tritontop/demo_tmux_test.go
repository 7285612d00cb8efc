package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// buildBinary builds tritontop once per test process (testBinary) and
// returns its path; tests share the binary and must not change it.
func buildBinary(t *testing.T) string {
	t.Helper()
	testBinary.once.Do(func() {
		bin := filepath.Join(testBinary.dir, "tritontop")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			testBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		testBinary.path = bin
	})
	if testBinary.err != nil {
		t.Fatal(testBinary.err)
	}
	return testBinary.path
}

var (
	inferRe = regexp.MustCompile(`([\d,]+(?:\.\d+)?) infer/s`)
	queueRe = regexp.MustCompile(`queue ([\d.]+)(ms|µs|s)`)
	gpuRe   = regexp.MustCompile(`│ \d+ \S*\s+(\d+)%`)
	concRe  = regexp.MustCompile(`concurrency (\d+)`)
)

// firstNumber returns the first submatch of re in screen as a number.
func firstNumber(re *regexp.Regexp, screen string) float64 {
	m := re.FindStringSubmatch(screen)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	return v
}

// TestDemoInTmux runs `tritontop demo` in a real terminal, as a newcomer
// would: the panes must show throughput, queue time and GPU utilization
// from the simulator, ↑ must raise the load, and q must exit with status 0.
func TestDemoInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (CI installs it)")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	exitFile := filepath.Join(dir, "exit")
	socket := "tritontop-test-" + strconv.Itoa(os.Getpid())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	// The demo GPU's calibration goes to a cache of the test's own.
	script := "XDG_CACHE_HOME=" + dir + " " + bin + " demo; echo $? > " + exitFile
	if out, err := tmux("new-session", "-d", "-s", "demo", "-x", "120", "-y", "40", "sh", "-c", script); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	t.Cleanup(func() { tmux("kill-server") })

	capture := func() string { s, _ := tmux("capture-pane", "-p", "-t", "demo"); return s }
	var screen string
	ok := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		screen = capture()
		if firstNumber(inferRe, screen) > 0 && firstNumber(queueRe, screen) > 0 && firstNumber(gpuRe, screen) > 0 {
			ok = true
			break
		}
	}
	if !ok {
		t.Fatalf("dashboard never showed throughput, queue time and GPU utilization:\n%s", screen)
	}
	if !strings.Contains(screen, "SIMULATED") {
		t.Errorf("the dashboard does not say the numbers are simulated:\n%s", screen)
	}
	before := firstNumber(concRe, screen)
	tmux("send-keys", "-t", "demo", "Up")
	raised := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		screen = capture()
		if firstNumber(concRe, screen) > before {
			raised = true
			break
		}
	}
	if !raised {
		t.Errorf("↑ did not raise concurrency above %v:\n%s", before, screen)
	}

	tmux("send-keys", "-t", "demo", "q")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if b, err := os.ReadFile(exitFile); err == nil && len(b) > 0 {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Fatalf("demo exited with status %s:\n%s", code, capture())
			}
			return
		}
	}
	t.Fatalf("demo did not exit after q:\n%s", capture())
}
