package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestSLOFlagsCommaAndRepeat: --slo takes several SLOs in one value,
// separated by commas, and repeated; a run's goodput objectives are the
// tightest of each kind, and a plan gets every SLO.
func TestSLOFlagsCommaAndRepeat(t *testing.T) {
	f, err := parseLoadFlags("tritontop", []string{"-m", "llm", "--slo", "ttft-p99:500ms, itl-p99:40ms", "--slo", "p99:2s"}, io.Discard, true)
	if err != nil {
		t.Fatal(err)
	}
	want := stats.Goodput{Latency: 2 * time.Second, TTFT: 500 * time.Millisecond, ITL: 40 * time.Millisecond}
	if len(f.SLO.Specs) != 3 || f.SLO.goodput != want {
		t.Errorf("specs %q, goodput %+v; want 3 and %+v", f.SLO.Specs, f.SLO.goodput, want)
	}
	// The plan's flags, parsed as runPlan parses them.
	pf := &PlanConfig{}
	f, err = parseLoadFlags("tritontop plan", []string{"-m", "llm", "--target-rate", "10", "--slo", "ttft-p99:500ms,itl-p99:40ms", "--slo", "p99:2s"},
		io.Discard, false, func(fs *flag.FlagSet) {
			registerPlanBudgetFlags(fs, &pf.Budget)
			fs.Float64Var(&pf.TargetRate, "target-rate", 0, "")
			fs.StringVar(&pf.Deployment, "deployment", "triton", "")
			fs.StringVar(&pf.Namespace, "namespace", "default", "")
		})
	if err != nil {
		t.Fatal(err)
	}
	pf.SLO = f.SLO.Specs
	if err := pf.check(f); err != nil {
		t.Fatal(err)
	}
	if pf.parsed.Metric != "ttft" || len(pf.more) != 2 || pf.more[0].Metric != "itl" || pf.more[1].Threshold != 2*time.Second {
		t.Errorf("plan SLOs %+v then %+v", pf.parsed, pf.more)
	}
	for _, c := range []struct{ args, want string }{
		{"ttft-p99:1s,ttft-p99:2s", "both bound ttft-p99"},
		{"ttft-p99:soon", "--slo"},
	} {
		code, _, stderr := runCLI("-m", "llm", "-u", "127.0.0.1:1", "--slo", c.args)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("--slo %s: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestGoodputEndToEnd runs the chat endpoint in open loop under two SLOs
// at once: objectives every request meets make the goodput every request;
// objectives none can meet (a first token within a microsecond) make it
// none. The summary, the CSV and the run file agree.
func TestGoodputEndToEnd(t *testing.T) {
	srv := startSim(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name, slo string
		all       bool
	}{
		{"loose", "ttft-p99:1h,itl-p99:1h", true},
		{"tight", "ttft-p99:1us,itl-p99:1h", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			runFile, csvFile := filepath.Join(dir, c.name+".jsonl"), filepath.Join(dir, c.name+".csv")
			code, stdout, stderr := runCLI("-m", "llm", "-u", srv.HTTPAddr(), "-i", "http", "--endpoint", "chat", "--streaming",
				"--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "4", "--request-rate", "6", "--duration", "2s",
				"--slo", c.slo, "--record", runFile, "-f", csvFile)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			run, err := record.ReadAll(runFile)
			if err != nil {
				t.Fatal(err)
			}
			st := run.Snapshots[len(run.Snapshots)-1].Run.Streaming
			if st == nil || st.Goodput == nil || st.Requests == 0 {
				t.Fatalf("run file: streaming %+v", st)
			}
			want := int64(0)
			if c.all {
				want = st.Requests
			}
			if st.Goodput.Requests != want {
				t.Errorf("goodput %d of %d requests, want %d", st.Goodput.Requests, st.Requests, want)
			}
			if !strings.Contains(stdout, "    Goodput: ") || !strings.Contains(stdout, " met every --slo at once)") {
				t.Errorf("summary:\n%s", stdout)
			}
			b, err := os.ReadFile(csvFile)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
			for i, h := range head {
				if h == "Request Goodput (requests/sec)" {
					if (row[i] == "0") == c.all {
						t.Errorf("CSV goodput %s (all good: %v)", row[i], c.all)
					}
					return
				}
			}
			t.Errorf("CSV has no goodput column: %s", lines[0])
		})
	}
}
