package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
)

// severalSimCount is a model's successful requests in a simulator's own
// statistics.
func severalSimCount(t *testing.T, srv *sim.Server, model string) int64 {
	t.Helper()
	st, err := srv.Engine().ModelStatistics(model, "")
	if err != nil {
		t.Fatal(err)
	}
	return int64(st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount())
}

// severalServerCount is what a tick's cell (a model's entry, a replica's)
// says Triton counted: its own statistics, when they measured the tick,
// and a late read it carries apart (the ticks before whose read had not
// answered when they were emitted).
func severalServerCount(own stats.ServerStats, late *stats.ServerStats) int64 {
	var n int64
	if own.Available && !own.Reset {
		n += own.SuccessCount
	}
	if late != nil && late.Available && !late.Reset {
		n += late.SuccessCount
	}
	return n
}

// severalServers points c at the simulators as replicas, each with its own
// metrics endpoint.
func severalServers(c *session.Config, srvs []*sim.Server) {
	c.URL, c.URLs, c.MetricsURLs = "", nil, nil
	for _, srv := range srvs {
		c.URLs = append(c.URLs, srv.GRPCAddr())
		c.MetricsURLs = append(c.MetricsURLs, "http://"+srv.MetricsAddr()+"/metrics")
	}
}

// TestSeveralModelsAndReplicas runs two models (resnet50 closed loop, bert
// open loop) over two simulators: every tick's models and replicas add up
// to its aggregate, client and server; each model's server counts and each
// replica's, with the late reads each carries, are the simulators' own;
// and the run file (schema 2) replays, summarizes, reports and compares
// model by model, with a CSV per model, while a schema-1 file still reads.
func TestSeveralModelsAndReplicas(t *testing.T) {
	t.Parallel()
	srvs := []*sim.Server{startSim(t), startSim(t)}
	models := []string{"resnet50", "bert"}
	var before [2][2]int64 // model, simulator
	for m, name := range models {
		for i, srv := range srvs {
			before[m][i] = severalSimCount(t, srv, name)
		}
	}
	dir := t.TempDir()
	runFile, csvFile := filepath.Join(dir, "two.jsonl"), filepath.Join(dir, "two.csv")
	c := quickConfig(srvs[0], "")
	severalServers(&c, srvs)
	c.ModelArgs = []string{"resnet50@concurrency=4", "bert@rate=100"}
	c.Shapes = []string{"input_ids:64", "attention_mask:64"}
	c.Record, c.CSV = runFile, csvFile
	live := summaryOf(t, c)

	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	h := run.Header
	if h.Schema != 2 || len(h.Models) != 2 || h.Models[0].Name != "resnet50" || h.Models[1].Load == nil ||
		h.Models[1].Load.Rate != 100 || len(h.Models[1].Config) == 0 || h.Load.Mode != load.Mixed {
		t.Fatalf("header: schema %d, models %+v, load %+v", h.Schema, h.Models, h.Load)
	}
	server, replicaServer, firstTick := severalCheckTicks(t, run)
	// Triton's statistics of each model, and of each server, are the
	// simulators' own: all of them, but for what finished before the
	// collector took its baselines, at the start of the first tick. On a
	// busy host some reads answer after their tick was emitted: a later
	// tick carries them apart (ServerLate, on the model's entry and the
	// replica's), and they count with the rest.
	var sims [2]int64
	for m, name := range models {
		var total int64
		for i, srv := range srvs {
			n := severalSimCount(t, srv, name) - before[m][i]
			total += n
			sims[i] += n
		}
		if missed := total - server[m]; missed < 0 || missed > firstTick[m] {
			t.Errorf("%s: the simulators counted %d successes, the run's statistics %d", name, total, server[m])
		}
		t.Logf("%s: %d successes, %d in the statistics", name, total, server[m])
	}
	for i := range srvs {
		if missed := sims[i] - replicaServer[i]; missed < 0 || missed > firstTick[0]+firstTick[1] {
			t.Errorf("simulator %d counted %d successes, its replica's statistics %d", i, sims[i], replicaServer[i])
		}
	}
	severalCheckReplay(t, live, runFile, dir, models)
	severalCheckReport(t, runFile)

	// Compared with resnet50 alone on the same servers: the model is
	// matched by name, then by level.
	alone := quickConfig(srvs[0], "resnet50")
	severalServers(&alone, srvs)
	alone.Concurrency, alone.Record = 4, filepath.Join(dir, "alone.jsonl")
	runOK(t, alone)
	if r, err := record.ReadAll(alone.Record); err != nil || r.Header.Schema != 1 || len(r.Snapshots) == 0 || len(r.Snapshots[0].Models) != 0 {
		t.Fatalf("a run of one model: %v", err)
	}
	cmp := severalCompare(t, alone.Record, runFile, "alone", "shared")
	for _, want := range []string{"Model resnet50\n", "concurrency 4", "All models\n", "Models only in shared: bert"} {
		if !strings.Contains(cmp, want) {
			t.Errorf("comparison lacks %q:\n%s", want, cmp)
		}
	}

	// A schema-1 file of an earlier tritontop still reads.
	var out, errb bytes.Buffer
	if err := session.Replay(context.Background(), session.ReplayConfig{File: "../record/testdata/v1.jsonl", JSON: true}, &out, &errb); err != nil ||
		!strings.Contains(out.String(), `"model"`) {
		t.Errorf("schema 1: %v: %s", err, errb.String())
	}
}

// severalCheckTicks checks that each tick's models and replicas add up to
// its aggregate and carry their loads, and returns Triton's successes of
// each model and of each replica over the run, late reads included, and
// each model's client successes in the first tick.
func severalCheckTicks(t *testing.T, run *record.Run) (server, replicaServer, firstTick [2]int64) {
	t.Helper()
	for _, s := range run.Snapshots {
		if len(s.Models) != 2 || len(s.Replicas) != 2 {
			t.Fatalf("tick %d: %d models, %d replicas", s.Seq, len(s.Models), len(s.Replicas))
		}
		var req, succ, errs, infer, ssucc, sexec, late int64
		for m, mm := range s.Models {
			req, succ, errs, infer = req+mm.Tick.Requests, succ+mm.Tick.Successes, errs+mm.Tick.Errors, infer+mm.Tick.Inferences
			if mm.Server.Available && !mm.Server.Reset {
				ssucc, sexec = ssucc+mm.Server.SuccessCount, sexec+mm.Server.ExecutionCount
			}
			late += severalServerCount(stats.ServerStats{}, mm.ServerLate)
			server[m] += severalServerCount(mm.Server, mm.ServerLate)
			if s.Seq == 1 {
				firstTick[m] = mm.Tick.Successes
			}
		}
		if req != s.Tick.Requests || succ != s.Tick.Successes || errs != s.Tick.Errors || infer != s.Tick.Inferences ||
			ssucc != s.Server.SuccessCount || sexec != s.Server.ExecutionCount || late != severalServerCount(stats.ServerStats{}, s.ServerLate) {
			t.Errorf("tick %d: the models add up to requests %d, successes %d, errors %d, inferences %d, Triton %d/%d, late %d; the aggregate %+v, Triton %d/%d, late %v",
				s.Seq, req, succ, errs, infer, ssucc, sexec, late, s.Tick, s.Server.SuccessCount, s.Server.ExecutionCount, s.ServerLate)
		}
		req, succ, ssucc, late = 0, 0, 0, 0
		for i, r := range s.Replicas {
			req, succ = req+r.Tick.Requests, succ+r.Tick.Successes
			if r.Server.Available && !r.Server.Reset {
				ssucc += r.Server.SuccessCount
			}
			late += severalServerCount(stats.ServerStats{}, r.ServerLate)
			replicaServer[i] += severalServerCount(r.Server, r.ServerLate)
		}
		if req != s.Tick.Requests || succ != s.Tick.Successes || ssucc != s.Server.SuccessCount ||
			late != severalServerCount(stats.ServerStats{}, s.ServerLate) {
			t.Errorf("tick %d: the replicas add up to requests %d, successes %d, Triton %d, late %d; the aggregate %d, %d, %d, late %v",
				s.Seq, req, succ, ssucc, late, s.Tick.Requests, s.Tick.Successes, s.Server.SuccessCount, s.ServerLate)
		}
		if s.Models[0].Load.Concurrency != 4 || s.Models[1].Load.Rate != 100 && !s.Load.Drain {
			t.Errorf("tick %d: loads %s", s.Seq, s.ModelLoads())
		}
	}
	return server, replicaServer, firstTick
}

// severalCheckReplay checks the live summary's block per model against the
// replay's, and perf_analyzer's CSV, one file per model, live and
// replayed.
func severalCheckReplay(t *testing.T, live record.Summary, runFile, dir string, models []string) {
	t.Helper()
	if len(live.Models) != 2 || live.Models[0].Client.Requests+live.Models[1].Client.Requests != live.Client.Requests ||
		len(live.Replicas) != 2 || live.Models[1].Load.Rate != 100 {
		t.Fatalf("live summary: models %+v", live.Models)
	}
	replayedCSV := filepath.Join(dir, "replayed.csv")
	var out, errb bytes.Buffer
	if err := session.Replay(context.Background(), session.ReplayConfig{File: runFile, JSON: true, CSV: replayedCSV}, &out, &errb); err != nil {
		t.Fatalf("replay: %v: %s", err, errb.String())
	}
	var again record.Summary
	if err := json.Unmarshal(out.Bytes(), &again); err != nil {
		t.Fatal(err)
	}
	for m := range live.Models {
		a, b := live.Models[m], again.Models[m]
		if a.Name != b.Name || a.Client.Requests != b.Client.Requests || a.Client.Latency.P99 != b.Client.Latency.P99 ||
			a.Server.SuccessCount != b.Server.SuccessCount || len(a.Steps) != len(b.Steps) {
			t.Errorf("model %s: live %+v, replayed %+v", a.Name, a.Client, b.Client)
		}
	}
	csvFile := filepath.Join(dir, "two.csv")
	for _, base := range []string{csvFile, replayedCSV} {
		for m, first := range []string{"Concurrency,", "Request Rate,"} {
			ext := filepath.Ext(base)
			b, err := os.ReadFile(strings.TrimSuffix(base, ext) + "." + models[m] + ext)
			if err != nil {
				t.Fatal(err)
			}
			if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], first) {
				t.Errorf("%s's CSV:\n%s", models[m], b)
			}
		}
		if _, err := os.Stat(base); err == nil {
			t.Errorf("%s written: a run over several models writes one CSV per model", base)
		}
	}
	out.Reset()
	if err := session.Replay(context.Background(), session.ReplayConfig{File: runFile, Markdown: true}, &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), "| resnet50 | concurrency 4 |") {
		t.Errorf("replay --markdown: %v\n%s", err, out.String())
	}
}

// severalCheckReport checks that the HTML report draws each model under its
// name.
func severalCheckReport(t *testing.T, runFile string) {
	t.Helper()
	run, err := report.ReadRun(runFile, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, []report.HTMLRun{{Label: "two", File: runFile, Run: run}}, report.HTMLOptions{}); err != nil {
		t.Fatalf("report: %v", err)
	}
	for _, want := range []string{`data-legend="resnet50"`, `data-legend="bert"`, "tritontop report: resnet50, bert"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the report lacks %s", want)
		}
	}
}

// severalCompare is `tritontop compare a b --label la --label lb`'s text.
func severalCompare(t *testing.T, a, b, la, lb string) string {
	t.Helper()
	ra, err := report.ReadRun(a, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := report.ReadRun(b, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c, err := report.Compare(report.SummarizeRepeated(ra), report.SummarizeRepeated(rb), la, lb)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	var out bytes.Buffer
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
