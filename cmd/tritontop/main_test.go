package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// testBinary is the tritontop binary the package's tests run: built once
// per test process (buildBinary), into a directory TestMain removes. Every
// test used to link its own, a few seconds each.
var testBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain keeps the package's tests, and the tritontop processes they
// start, off the user's cache directory: the demo GPU's calibration is
// cached there (democache.go), and a calibration made on a developer's busy
// machine must not size the demo of a later test run. Tests that check the
// cache set their own XDG_CACHE_HOME. Go's build cache is by default
// under XDG_CACHE_HOME too: it is pinned first (GOCACHE), or buildBinary's
// go build would compile every package anew in an empty cache, about 45 s
// of both cores per test process.
func TestMain(m *testing.M) {
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			if c := strings.TrimSpace(string(out)); c != "" && c != "off" {
				os.Setenv("GOCACHE", c)
			}
		}
	}
	dir, err := os.MkdirTemp("", "tritontop-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test cache directory:", err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	testBinary.dir = filepath.Join(dir, "bin")
	if err := os.Mkdir(testBinary.dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "test binary directory:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
