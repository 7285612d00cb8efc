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

	"github.com/tritontop/tritontop/internal/testproc"
)

// terminal is a tmux pane running one tritontop command line, on a tmux
// server of the test's own that runs in the foreground as the test's child
// (tmux -D): when the test process dies, the kernel kills the server
// (testproc), the pane's terminal hangs up and its programs end with it.
type terminal struct {
	t                 *testing.T
	socket            string
	exitFile, errFile string
}

// newTerminal starts a w×h pane running command (a shell command line) in
// its own cache directory (so that a demo's GPU calibration is the test's
// own), and waits until tmux answers. The command's exit status is kept for
// quit.
func newTerminal(t *testing.T, w, h int, command string) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (CI installs it)")
	}
	dir := t.TempDir()
	tm := &terminal{t: t, exitFile: filepath.Join(dir, "exit"), errFile: filepath.Join(dir, "stderr"),
		socket: "tritontop-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + strconv.Itoa(os.Getpid())}
	server := testproc.Command("tmux", "-L", tm.socket, "-D")
	if err := testproc.Start(t, server); err != nil {
		t.Fatalf("start tmux: %v", err)
	}
	// Its standard error goes to a file, so that a failure can show it
	// after the pane is gone.
	script := "XDG_CACHE_HOME=" + dir + " " + command + " 2>" + tm.errFile + "; echo $? > " + tm.exitFile
	var out string
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if out, err = tm.tmux("new-session", "-d", "-s", "run", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "sh", "-c", script); err == nil {
			return tm
		}
	}
	t.Fatalf("tmux new-session: %v %s", err, out)
	return nil
}

// tmux runs a tmux command on the pane's server.
func (tm *terminal) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// capture is the pane's screen; once the command ended, its exit status
// and standard error.
func (tm *terminal) capture() string {
	s, err := tm.tmux("capture-pane", "-p", "-t", "run")
	if err != nil {
		code, _ := os.ReadFile(tm.exitFile)
		stderr, _ := os.ReadFile(tm.errFile)
		return fmt.Sprintf("(the command ended: %s; exit status %s, standard error:\n%s)", s, strings.TrimSpace(string(code)), stderr)
	}
	return s
}

// keys sends keys to the pane (tmux key names, or literal text with -l).
func (tm *terminal) keys(keys ...string) {
	tm.tmux(append([]string{"send-keys", "-t", "run"}, keys...)...)
}

// flags are tmux's format variables of the pane, e.g. what the program
// asked of the terminal.
func (tm *terminal) flags(format string) string {
	s, _ := tm.tmux("display", "-p", "-t", "run", format)
	return s
}

// waitFor polls the screen until ok holds or within passes, doing act
// before each look; it returns the last screen.
func (tm *terminal) waitFor(within time.Duration, act func(), ok func(string) bool) (string, bool) {
	var screen string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		act()
		if screen = tm.capture(); ok(screen) {
			return screen, true
		}
	}
	return screen, false
}

// waitHeader waits until the header's second line (the load, the state
// and the verdict) matches want, and returns the screen.
func (tm *terminal) waitHeader(want *regexp.Regexp, within time.Duration) string {
	tm.t.Helper()
	screen, ok := tm.waitFor(within, func() {}, func(s string) bool {
		lines := strings.Split(s, "\n")
		return len(lines) > 1 && want.MatchString(lines[1])
	})
	if !ok {
		tm.t.Fatalf("the header never matched %q in %v:\n%s", want, within, screen)
	}
	return screen
}

// quit sends q and returns the command's exit status ("none" when it did
// not exit within 20 s).
func (tm *terminal) quit() string {
	tm.keys("q")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(tm.exitFile); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
	}
	return "none"
}

// quitOK quits and fails the test unless the command exited with 0.
func (tm *terminal) quitOK() {
	tm.t.Helper()
	if code := tm.quit(); code != "0" {
		tm.t.Errorf("exit status %s after q:\n%s", code, tm.capture())
	}
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

// buildBinary builds tritontop once per test process (testBinary) and
// returns its path; tests share the binary and must not change it.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
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
