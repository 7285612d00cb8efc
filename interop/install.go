package interop

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// DirEnv names the environment variable that points at a Triton folder
// other than ../shared/triton beside the repository's root.
const DirEnv = "TRITONTOP_TRITON_DIR"

// Install is a Triton folder with everything a test needs in it.
type Install struct {
	// Dir is the folder; ServerBin and PerfAnalyzerBin its binaries, Backends
	// and Models its backend directory and model repository.
	Dir, ServerBin, PerfAnalyzerBin, Backends, Models string
}

// Locate finds the Triton folder and checks that its server can run here;
// otherwise it skips the test with one line saying what is missing.
func Locate(t testing.TB) Install {
	t.Helper()
	in, err := locate()
	if err != nil {
		t.Skip(err.Error())
	}
	return in
}

// locate is Locate's check, with what is missing as its error.
func locate() (Install, error) {
	if runtime.GOOS != "linux" {
		return Install{}, fmt.Errorf("interop: the Triton build runs on Linux only, not %s", runtime.GOOS)
	}
	dir, err := tritonDir()
	if err != nil {
		return Install{}, err
	}
	in := Install{
		Dir:             dir,
		ServerBin:       filepath.Join(dir, "bin", "tritonserver"),
		PerfAnalyzerBin: filepath.Join(dir, "bin", "perf_analyzer"),
		Backends:        filepath.Join(dir, "backends"),
		Models:          filepath.Join(dir, "models"),
	}
	for _, p := range []string{in.ServerBin, in.Backends, in.Models} {
		if _, err := os.Stat(p); err != nil {
			return Install{}, fmt.Errorf("interop: no %s in the Triton folder %s (set %s to a folder with bin/tritonserver, backends/ and models/)", filepath.Base(p), dir, DirEnv)
		}
	}
	if missing := missingLibraries(in.ServerBin); len(missing) > 0 {
		return Install{}, fmt.Errorf("interop: tritonserver's runtime libraries are missing: %s (install the Debian packages listed in %s)",
			strings.Join(missing, ", "), filepath.Join(dir, "README.md"))
	}
	return in, nil
}

// tritonDir is $TRITONTOP_TRITON_DIR, else ../shared/triton beside the
// repository's root; an error says which is not there.
func tritonDir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		if _, err := os.Stat(d); err != nil {
			return "", fmt.Errorf("interop: %s=%s is not there", DirEnv, d)
		}
		return d, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	d := filepath.Join(filepath.Dir(root), "shared", "triton")
	if _, err := os.Stat(d); err != nil {
		return "", fmt.Errorf("interop: no Triton at %s (../shared/triton beside the repository; set %s to point elsewhere)", d, DirEnv)
	}
	return d, nil
}

// repoRoot is the folder of go.mod above the working directory (a test's
// package folder).
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("interop: working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("interop: no go.mod above the working directory, so no ../shared/triton to find")
		}
		d = up
	}
}

// missingLibraries lists the shared libraries bin's loader would not find,
// as ldd reports them; none when ldd itself is not there (the server's
// start then says what is wrong).
func missingLibraries(bin string) []string {
	out, err := exec.Command("ldd", bin).Output()
	if err != nil && len(out) == 0 {
		return nil
	}
	var missing []string
	for line := range strings.Lines(string(out)) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), " => ")
		if ok && strings.TrimSpace(rest) == "not found" && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	return missing
}
