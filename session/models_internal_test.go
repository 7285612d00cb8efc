package session

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/load"
)

func TestParseModelArg(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	// Each model sees the run's settings with its own in their place
	// (--load-file models.yaml --concurrency 2 -b 2).
	f := Defaults()
	f.LoadFile, f.Concurrency, f.BatchSize = yamlFile, 2, 2
	f.Given = map[string]bool{"load-file": true, "concurrency": true, "b": true}
	if err := f.check(io.Discard); err != nil {
		t.Fatal(err)
	}
	if !f.several() || f.Model != "resnet50,bert" {
		t.Fatalf("settings: %+v", f)
	}
	ra, be := f.forModel(f.models[0]), f.forModel(f.models[1])
	if ra.Model != "resnet50" || ra.Concurrency != 8 || ra.BatchSize != 4 || ra.ModelVersion != "1" {
		t.Errorf("resnet50's settings: concurrency %d batch %d version %q", ra.Concurrency, ra.BatchSize, ra.ModelVersion)
	}
	if be.Model != "bert" || be.RequestRate != 200 || be.Distribution != "poisson" || be.BatchSize != 2 || be.InputData != "zero" {
		t.Errorf("bert's settings: rate %v %s batch %d input %s", be.RequestRate, be.Distribution, be.BatchSize, be.InputData)
	}
	if sc, err := loadFromFlags(be); err != nil || sc.initial != (load.Target{Mode: load.Rate, Rate: 200, Distribution: load.Poisson, MaxInFlight: defaultMaxInflight}) {
		t.Errorf("bert's load: %+v %v", sc.initial, err)
	}
	// One model's @load is the run's load: a run of one model, schema 1
	// (-m bert@rate=50,poisson).
	one := Defaults()
	one.ModelArgs, one.Given = []string{"bert@rate=50,poisson"}, map[string]bool{"m": true}
	if err := one.check(io.Discard); err != nil {
		t.Fatal(err)
	}
	if one.several() || one.Model != "bert" || one.RequestRate != 50 || one.Distribution != "poisson" {
		t.Errorf("one model with its load: %+v", one)
	}
	if got := csvPathFor("/tmp/out.csv", "bert"); got != "/tmp/out.bert.csv" {
		t.Errorf("CSV of bert: %s", got)
	}
}
