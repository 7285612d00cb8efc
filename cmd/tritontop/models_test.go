package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/sim"
)

func TestParseModelArg(t *testing.T) {
	for _, c := range []struct {
		arg     string
		name    string
		version string
		load    load.Target
	}{
		{"resnet50", "resnet50", "", load.Target{}},
		{"resnet50@concurrency=8", "resnet50", "", load.Target{Mode: load.Concurrency, Concurrency: 8}},
		{"bert@rate=200", "bert", "", load.Target{Mode: load.Rate, Rate: 200}},
		{"bert@rate=200,poisson", "bert", "", load.Target{Mode: load.Rate, Rate: 200, Distribution: load.Poisson}},
		{"bert@version=2,rate=0.5,constant", "bert", "2", load.Target{Mode: load.Rate, Rate: 0.5, Distribution: load.Constant}},
	} {
		m, err := parseModelArg(c.arg)
		if err != nil {
			t.Errorf("%s: %v", c.arg, err)
			continue
		}
		if m.name != c.name || m.version != c.version || m.load != c.load || m.where != "-m "+c.arg {
			t.Errorf("%s: %+v", c.arg, m)
		}
	}
}

func TestReadLoadFile(t *testing.T) {
	dir := t.TempDir()
	yamlFile := filepath.Join(dir, "models.yaml")
	if err := os.WriteFile(yamlFile, []byte(`# two models on shared GPUs
models:
  - model: resnet50
    version: 1
    concurrency: 8
    batch: 4
  - model: bert
    rate: 200
    distribution: poisson
    shape: {input_ids: [128], attention_mask: [1, 128]}
    input_data: zero
`), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(dir, "models.json")
	if err := os.WriteFile(jsonFile, []byte(`{"models": [{"model": "resnet50", "version": "1", "concurrency": 8, "batch": 4},
		{"model": "bert", "rate": 200, "distribution": "poisson", "shape": {"input_ids": [128], "attention_mask": [1, 128]}, "input_data": "zero"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{yamlFile, jsonFile} {
		specs, err := readLoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(specs) != 2 {
			t.Fatalf("%s: %+v", path, specs)
		}
		a, b := specs[0], specs[1]
		if a.name != "resnet50" || a.version != "1" || a.load != (load.Target{Mode: load.Concurrency, Concurrency: 8}) || a.batch != 4 {
			t.Errorf("%s: resnet50 %+v", path, a)
		}
		if b.load != (load.Target{Mode: load.Rate, Rate: 200, Distribution: load.Poisson}) || b.inputData != "zero" ||
			strings.Join(b.shapes, " ") != "attention_mask:1,128 input_ids:128" || b.where != "--load-file "+path+": model bert" {
			t.Errorf("%s: bert %+v", path, b)
		}
	}
	// Each model sees the run's flags with its own in their place.
	f, err := parseLoadFlags("tritontop", []string{"--load-file", yamlFile, "--concurrency", "2", "-b", "2"}, os.Stderr, true)
	if err != nil {
		t.Fatal(err)
	}
	if !f.several() || f.Model != "resnet50,bert" {
		t.Fatalf("flags: %+v", f)
	}
	ra, be := f.forModel(f.models[0]), f.forModel(f.models[1])
	if ra.Model != "resnet50" || ra.Concurrency != 8 || ra.BatchSize != 4 || ra.ModelVersion != "1" {
		t.Errorf("resnet50's flags: concurrency %d batch %d version %q", ra.Concurrency, ra.BatchSize, ra.ModelVersion)
	}
	if be.Model != "bert" || be.RequestRate != 200 || be.Distribution != "poisson" || be.BatchSize != 2 || be.InputData != "zero" {
		t.Errorf("bert's flags: rate %v %s batch %d input %s", be.RequestRate, be.Distribution, be.BatchSize, be.InputData)
	}
	if sc, err := loadFromFlags(be); err != nil || sc.initial != (load.Target{Mode: load.Rate, Rate: 200, Distribution: load.Poisson, MaxInFlight: defaultMaxInflight}) {
		t.Errorf("bert's load: %+v %v", sc.initial, err)
	}
	// One model's @load is the run's load: a run of one model, schema 1.
	one, err := parseLoadFlags("tritontop", []string{"-m", "bert@rate=50,poisson"}, os.Stderr, true)
	if err != nil {
		t.Fatal(err)
	}
	if one.several() || one.Model != "bert" || one.RequestRate != 50 || one.Distribution != "poisson" {
		t.Errorf("one model with its load: %+v", one)
	}
	if got := csvPathFor("/tmp/out.csv", "bert"); got != "/tmp/out.bert.csv" {
		t.Errorf("CSV of bert: %s", got)
	}
}

// simCount is a model's successful requests in a simulator's statistics.
func simCount(t *testing.T, srv *sim.Server, model string) int64 {
	t.Helper()
	st, err := srv.Engine().ModelStatistics(model, "")
	if err != nil {
		t.Fatal(err)
	}
	return int64(st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount())
}

// TestSeveralModelsAndReplicas runs two models (resnet50 closed loop, bert
// open loop) over two simulators: every tick's models and replicas add up
// to its aggregate, client and server; each model's server counts and each
// replica's are the simulators' own; and the run file (schema 2) replays,
// summarizes, reports and compares model by model, with a CSV per model,
// while a schema-1 file still reads.
func TestSeveralModelsAndReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("two 4 s load runs against two simulators")
	}
	srvs := []*sim.Server{startSim(t), startSim(t)}
	models := []string{"resnet50", "bert"}
	var before [2][2]int64 // model, simulator
	for m, name := range models {
		for i, srv := range srvs {
			before[m][i] = simCount(t, srv, name)
		}
	}
	dir := t.TempDir()
	runFile, csvFile := filepath.Join(dir, "two.jsonl"), filepath.Join(dir, "two.csv")
	servers := []string{"-u", srvs[0].GRPCAddr(), "-u", srvs[1].GRPCAddr(),
		"--metrics-url", "http://" + srvs[0].MetricsAddr() + "/metrics", "--metrics-url", "http://" + srvs[1].MetricsAddr() + "/metrics"}
	args := append([]string{"-m", "resnet50@concurrency=4", "-m", "bert@rate=100", "--shape", "input_ids:64", "--shape", "attention_mask:64",
		"--tick", "500ms", "--duration", "4s", "--record", runFile, "-f", csvFile, "--json"}, servers...)
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var live record.Summary
	if err := json.Unmarshal([]byte(stdout), &live); err != nil {
		t.Fatalf("--json summary: %v\n%s", err, stdout)
	}

	run, err := record.ReadAll(runFile)
	if err != nil {
		t.Fatal(err)
	}
	h := run.Header
	if h.Schema != 2 || len(h.Models) != 2 || h.Models[0].Name != "resnet50" || h.Models[1].Load == nil ||
		h.Models[1].Load.Rate != 100 || len(h.Models[1].Config) == 0 || h.Load.Mode != load.Mixed {
		t.Fatalf("header: schema %d, models %+v, load %+v", h.Schema, h.Models, h.Load)
	}
	var server [2]int64 // Triton's successes of each model, and on each replica
	var replicaServer [2]int64
	var firstTick [2]int64
	for _, s := range run.Snapshots {
		if len(s.Models) != 2 || len(s.Replicas) != 2 {
			t.Fatalf("tick %d: %d models, %d replicas", s.Seq, len(s.Models), len(s.Replicas))
		}
		var req, succ, errs, infer, ssucc, sexec int64
		for m, mm := range s.Models {
			req, succ, errs, infer = req+mm.Tick.Requests, succ+mm.Tick.Successes, errs+mm.Tick.Errors, infer+mm.Tick.Inferences
			if mm.Server.Available && !mm.Server.Reset {
				ssucc, sexec = ssucc+mm.Server.SuccessCount, sexec+mm.Server.ExecutionCount
				server[m] += mm.Server.SuccessCount
			}
			if s.Seq == 1 {
				firstTick[m] = mm.Tick.Successes
			}
		}
		if req != s.Tick.Requests || succ != s.Tick.Successes || errs != s.Tick.Errors || infer != s.Tick.Inferences ||
			ssucc != s.Server.SuccessCount || sexec != s.Server.ExecutionCount {
			t.Errorf("tick %d: the models add up to requests %d, successes %d, errors %d, inferences %d, Triton %d/%d; the aggregate %+v, Triton %d/%d",
				s.Seq, req, succ, errs, infer, ssucc, sexec, s.Tick, s.Server.SuccessCount, s.Server.ExecutionCount)
		}
		req, succ, ssucc = 0, 0, 0
		for i, r := range s.Replicas {
			req, succ = req+r.Tick.Requests, succ+r.Tick.Successes
			if r.Server.Available && !r.Server.Reset {
				ssucc += r.Server.SuccessCount
				replicaServer[i] += r.Server.SuccessCount
			}
		}
		if req != s.Tick.Requests || succ != s.Tick.Successes || ssucc != s.Server.SuccessCount {
			t.Errorf("tick %d: the replicas add up to requests %d, successes %d, Triton %d; the aggregate %d, %d, %d",
				s.Seq, req, succ, ssucc, s.Tick.Requests, s.Tick.Successes, s.Server.SuccessCount)
		}
		if s.Models[0].Load.Concurrency != 4 || s.Models[1].Load.Rate != 100 && !s.Load.Drain {
			t.Errorf("tick %d: loads %s", s.Seq, s.ModelLoads())
		}
	}
	// Triton's statistics of each model, and of each server, are the
	// simulators' own: all of them, but for what finished before the
	// collector took its baselines, at the start of the first tick.
	var sims [2]int64
	for m, name := range models {
		var total int64
		for i, srv := range srvs {
			n := simCount(t, srv, name) - before[m][i]
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

	// The live summary has a block per model; the replay's is the same.
	if len(live.Models) != 2 || live.Models[0].Client.Requests+live.Models[1].Client.Requests != live.Client.Requests ||
		len(live.Replicas) != 2 || live.Models[1].Load.Rate != 100 {
		t.Fatalf("live summary: models %+v", live.Models)
	}
	code, replayed, stderr := runCLI("replay", runFile, "--json", "-f", filepath.Join(dir, "replayed.csv"))
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	var again record.Summary
	if err := json.Unmarshal([]byte(replayed), &again); err != nil {
		t.Fatal(err)
	}
	for m := range live.Models {
		a, b := live.Models[m], again.Models[m]
		if a.Name != b.Name || a.Client.Requests != b.Client.Requests || a.Client.Latency.P99 != b.Client.Latency.P99 ||
			a.Server.SuccessCount != b.Server.SuccessCount || len(a.Steps) != len(b.Steps) {
			t.Errorf("model %s: live %+v, replayed %+v", a.Name, a.Client, b.Client)
		}
	}
	// perf_analyzer's CSV is of one model: a file per model, live and replayed.
	for _, base := range []string{csvFile, filepath.Join(dir, "replayed.csv")} {
		for m, first := range []string{"Concurrency,", "Request Rate,"} {
			b, err := os.ReadFile(csvPathFor(base, models[m]))
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
	if code, text, stderr := runCLI("replay", runFile, "--markdown"); code != 0 || !strings.Contains(text, "| resnet50 | concurrency 4 |") {
		t.Errorf("replay --markdown: exit %d %s\n%s", code, stderr, text)
	}

	// The HTML report draws each model under its name.
	page := filepath.Join(dir, "two.html")
	if code, _, stderr := runCLI("report", runFile, "-o", page); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-legend="resnet50"`, `data-legend="bert"`, "tritontop report: resnet50, bert"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the report lacks %s", want)
		}
	}

	// Compared with resnet50 alone on the same servers: the model is
	// matched by name, then by level.
	alone := filepath.Join(dir, "alone.jsonl")
	if code, _, stderr := runCLI(append([]string{"-m", "resnet50", "--concurrency", "4", "--tick", "500ms", "--duration", "2s",
		"--record", alone, "--headless"}, servers...)...); code != 0 {
		t.Fatalf("resnet50 alone: exit %d: %s", code, stderr)
	}
	if r, err := record.ReadAll(alone); err != nil || r.Header.Schema != 1 || len(r.Snapshots[0].Models) != 0 {
		t.Errorf("a run of one model: schema %d, err %v", r.Header.Schema, err)
	}
	code, cmp, stderr := runCLI("compare", alone, runFile, "--label", "alone", "--label", "shared")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Model resnet50\n", "concurrency 4", "All models\n", "Models only in shared: bert"} {
		if !strings.Contains(cmp, want) {
			t.Errorf("comparison lacks %q:\n%s", want, cmp)
		}
	}

	// A schema-1 file of an earlier tritontop still reads.
	if code, out, stderr := runCLI("replay", "../../record/testdata/v1.jsonl", "--json"); code != 0 || !strings.Contains(out, `"model"`) {
		t.Errorf("schema 1: exit %d: %s", code, stderr)
	}
}
