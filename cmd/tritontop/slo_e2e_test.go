package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// TestSLOMissExits99: a range against `tritontop sim` whose SLO no level
// can meet exits with exitSLO and says which SLO in one line; the same
// range with an SLO every level meets exits 0 (stability is loosened: a
// busy test host's windows need not agree within 10%). The help lists the
// code. replay, compare and the HTML report of the runs say the server was
// the simulator.
func TestSLOMissExits99(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: real binary and simulator")
	}
	bin := buildBinary(t)
	_, addrs, _ := startSimCommand(t, bin)
	dir := t.TempDir()
	for _, c := range []struct {
		name      string
		threshold string
		want      int
	}{
		{"impossible", "1", exitSLO},
		{"met", "60000", exitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, c.name+".jsonl")
			code, stdout, stderr := runBinary(t, bin, "-u", addrs["gRPC"], "-m", "resnet50", "--headless", "--json",
				"--concurrency-range", "1:2", "--latency-threshold", c.threshold,
				"--step-duration", "1500ms", "--tick", "250ms", "--stability-percentage", "100", "--record", file)
			if code != c.want {
				t.Fatalf("exit status %d, want %d; stderr:\n%s", code, c.want, stderr)
			}
			var sum record.Summary
			if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
				t.Fatalf("--json summary: %v\n%s", err, stdout)
			}
			if !sum.Simulated {
				t.Errorf("the JSON summary does not say the server was the simulator")
			}
			if sum.Search == nil || sum.Search.SLO == nil {
				t.Fatalf("the summary has no search with an SLO: %+v", sum.Search)
			}
			missed := strings.Contains(stderr, "tritontop: no level met average latency < 1.00 ms (exit status 99")
			if missed != (c.want == exitSLO) || (sum.Search.Best < 0) != (c.want == exitSLO) {
				t.Errorf("best level %d; stderr:\n%s", sum.Search.Best, stderr)
			}
			run, err := record.ReadAll(file)
			if err != nil || run.Summary == nil {
				t.Fatalf("the run file was not kept whole: %v", err)
			}
		})
	}
	// Every reader of the files says the server was the simulator.
	a, b := filepath.Join(dir, "impossible.jsonl"), filepath.Join(dir, "met.jsonl")
	html := filepath.Join(dir, "report.html")
	for _, args := range [][]string{{"replay", a}, {"replay", a, "--markdown"}, {"compare", a, b}, {"compare", a, b, "--markdown"},
		{"report", a, b, "-o", html}} {
		code, stdout, stderr := runBinary(t, bin, args...)
		if code != 0 {
			t.Errorf("tritontop %v: exit %d: %s", args, code, stderr)
			continue
		}
		if args[0] == "report" {
			page, err := os.ReadFile(html)
			if err != nil {
				t.Fatal(err)
			}
			stdout = string(page)
		}
		if n := strings.Count(stdout, "tritontop simulator (numbers are simulated, not a real GPU)"); n == 0 {
			t.Errorf("tritontop %v does not say the server was the simulator:\n%s", args, stdout)
		}
	}
	_, help, _ := runBinary(t, bin, "help")
	if !strings.Contains(help, "99 an SLO missed") {
		t.Errorf("help does not list exit status 99:\n%s", help)
	}
}
