package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/triton"
)

// maxModels bounds the models of a run: each is a driver, an aggregator
// with its windows, and a statistics poller per server, read every tick.
const maxModels = 16

// modelSpec is one model of a run and what is sent to it, from -m
// NAME[@LOAD] or a --load-file entry. A zero value of a field means the
// run's flag (--concurrency, -b, --shape, ...).
type modelSpec struct {
	name, version string
	// where names the spec in errors: "-m bert@rate=200" or
	// "--load-file models.yaml: model bert".
	where string
	// load is the model's own load; Mode "" means the run's load flags.
	load      load.Target
	batch     int
	shapes    []string
	inputData string
	streaming *bool
	// thresholds are the model's own --threshold expressions.
	thresholds []string
	stages     *load.Plan // a load file's stages: (--stages)
}

// hasLoad reports whether the spec sets the model's load.
func (m *modelSpec) hasLoad() bool { return m.load.Mode != "" }

// parseModelArg reads one -m: NAME, or NAME@OPT[,OPT...] with the options
// concurrency=N, rate=R, poisson or constant, and version=V.
func parseModelArg(arg string) (modelSpec, error) {
	name, opts, hasOpts := strings.Cut(arg, "@")
	m := modelSpec{name: strings.TrimSpace(name), where: "-m " + arg}
	bad := func(why string) error {
		return fmt.Errorf("bad -m %q: %s (use -m NAME, -m NAME@concurrency=N, or -m NAME@rate=R[,poisson])", textsafe.Excerpt(arg, maxQuoted), why)
	}
	if m.name == "" {
		return m, bad("no model name")
	}
	if !hasOpts {
		return m, nil
	}
	if strings.TrimSpace(opts) == "" {
		return m, bad("nothing after @")
	}
	given := map[string]bool{}
	for _, opt := range strings.Split(opts, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(opt), "=")
		if err := optionOnce(given, k); err != nil {
			return m, bad(err.Error())
		}
		switch k {
		case "concurrency", "c":
			n, err := strconv.Atoi(v)
			if err != nil {
				return m, bad(fmt.Sprintf("concurrency %s is not a whole number", textsafe.Quote(v)))
			}
			if m.load.Mode == load.Rate {
				return m, bad("both a concurrency and a rate: choose one")
			}
			m.load.Mode, m.load.Concurrency = load.Concurrency, n
		case "rate", "request-rate":
			r, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return m, bad(fmt.Sprintf("rate %s is not a number", textsafe.Quote(v)))
			}
			if m.load.Mode == load.Concurrency {
				return m, bad("both a concurrency and a rate: choose one")
			}
			m.load.Mode, m.load.Rate = load.Rate, r
		case "poisson", "constant":
			m.load.Distribution = load.Distribution(k)
		case "version":
			if v == "" {
				return m, bad("an empty version")
			}
			m.version = v
		case "":
			return m, bad("an empty option")
		default:
			return m, bad(fmt.Sprintf("unknown option %s", textsafe.Quote(k)))
		}
	}
	if m.load.Distribution != "" && m.load.Mode != load.Rate {
		return m, bad(string(m.load.Distribution) + " is the distribution of a rate: add rate=R")
	}
	return m, nil
}

// loadFile is the --load-file format: the run's models, each with its load
// and what is sent to it. It is YAML, or JSON (which YAML reads too).
type loadFile struct {
	Models []loadFileModel `yaml:"models"`
}

// loadFileModel is one model of a load file.
type loadFileModel struct {
	Model        string             `yaml:"model"`
	Version      string             `yaml:"version"`
	Concurrency  *int               `yaml:"concurrency"`
	Rate         *float64           `yaml:"rate"`
	Distribution string             `yaml:"distribution"`
	Batch        *int               `yaml:"batch"`
	Shape        map[string][]int64 `yaml:"shape"`
	InputData    string             `yaml:"input_data"`
	Streaming    *bool              `yaml:"streaming"`
	Thresholds   []string           `yaml:"thresholds"`
	Stages       string             `yaml:"stages"`
}

// loadFileFields are loadFileModel's keys, for the error about one that
// is not.
const loadFileFields = "model, version, concurrency, rate, distribution, batch, shape, input_data, streaming, thresholds, stages"

var unknownFieldRe = regexp.MustCompile(`field (\S+) not found in type \S+`)

// readLoadFile reads --load-file: every model in it, in order.
func readLoadFile(path string) ([]modelSpec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read --load-file %s: %v", path, errors.Unwrap(err))
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("--load-file %s: %s", path, fmt.Sprintf(format, quotable(a)...))
	}
	var lf loadFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&lf); err != nil {
		var te *yaml.TypeError
		switch {
		case errors.Is(err, io.EOF):
			return nil, bad("is empty: list the models under models:, each with model: NAME")
		case errors.As(err, &te) && len(te.Errors) > 0:
			msg := unknownFieldRe.ReplaceAllString(te.Errors[0], "unknown field \"$1\" (a model has "+loadFileFields+")")
			return nil, bad("%s", textsafe.Excerpt(msg, maxQuoted))
		}
		return nil, bad("not YAML or JSON: %s", textsafe.Excerpt(strings.TrimPrefix(oneLine(err.Error()), "yaml: "), maxQuoted))
	}
	if err := loadFileHasOneDocument(dec); err != nil {
		return nil, bad("%v", err)
	}
	if len(lf.Models) == 0 {
		return nil, bad("no models: list them under models:, each with model: NAME")
	}
	var out []modelSpec
	for i, e := range lf.Models {
		m := modelSpec{name: strings.TrimSpace(e.Model), version: e.Version, inputData: e.InputData, streaming: e.Streaming, thresholds: e.Thresholds}
		if m.name == "" {
			return nil, bad("model %d has no model: NAME", i+1)
		}
		m.where = fmt.Sprintf("--load-file %s: model %s", path, m.name)
		switch {
		case e.Concurrency != nil && e.Rate != nil:
			return nil, bad("model %s has both a concurrency and a rate: choose one", m.name)
		case e.Concurrency != nil:
			m.load = load.Target{Mode: load.Concurrency, Concurrency: *e.Concurrency}
		case e.Rate != nil:
			m.load = load.Target{Mode: load.Rate, Rate: *e.Rate}
		}
		if e.Stages != "" {
			if m.stages, err = modelStages(m, e); err != nil {
				return nil, bad("%v", err)
			}
		}
		switch e.Distribution {
		case "":
		case "constant", "poisson":
			if m.load.Mode != load.Rate {
				return nil, bad("model %s has a distribution without a rate: add rate: R", m.name)
			}
			m.load.Distribution = load.Distribution(e.Distribution)
		default:
			return nil, bad("model %s: unknown distribution %q: use constant or poisson", m.name, e.Distribution)
		}
		if e.Batch != nil {
			if *e.Batch < 1 {
				return nil, bad("model %s: batch %d is out of range: use 1 to %d", m.name, *e.Batch, maxBatch)
			}
			m.batch = *e.Batch
		}
		for _, name := range slices.Sorted(maps.Keys(e.Shape)) {
			dims := make([]string, len(e.Shape[name]))
			for j, d := range e.Shape[name] {
				dims[j] = strconv.FormatInt(d, 10)
			}
			m.shapes = append(m.shapes, name+":"+strings.Join(dims, ","))
		}
		if _, err := triton.ParseShapes(m.shapes); err != nil {
			return nil, bad("model %s: %v", m.name, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// takeModels reads -m and --load-file. One model is a run of one model:
// its @load takes the place of the run's load flags. Several are a run
// over several models (f.models), each with its own driver: the run's
// flags apply to each, and each model's own settings take their place.
func takeModels(f *Config) error {
	var specs []modelSpec
	for _, arg := range f.ModelArgs {
		m, err := parseModelArg(arg)
		if err != nil {
			return err
		}
		specs = append(specs, m)
	}
	if f.LoadFile != "" {
		if len(specs) > 0 {
			return fmt.Errorf("--load-file %s lists the run's models: drop -m", f.LoadFile)
		}
		var err error
		if specs, err = readLoadFile(f.LoadFile); err != nil {
			return err
		}
	}
	seen := map[string]string{}
	for _, m := range specs {
		if first, dup := seen[m.name]; dup {
			return fmt.Errorf("model %s given twice (%s and %s): give each model once", textsafe.Bound(m.name), textsafe.Excerpt(first, maxQuoted), textsafe.Excerpt(m.where, maxQuoted))
		}
		seen[m.name] = m.where
	}
	ranged := f.ConcurrencyRange != "" || f.RequestRateRange != ""
	for _, m := range specs {
		if (m.hasLoad() || len(specs) > 1) && ranged {
			what := "--concurrency-range and --request-rate-range step one model's load"
			if len(specs) > 1 {
				return fmt.Errorf("%s: run one model at a time (-m once, without @load)", what)
			}
			return fmt.Errorf("%s: drop the @load of %s, or the range", what, textsafe.Excerpt(m.where, maxQuoted))
		}
	}
	for _, m := range specs {
		if m.streaming != nil && *m.streaming && f.Protocol != "grpc" {
			return fmt.Errorf("%s streams, which needs gRPC: drop -i http", textsafe.Excerpt(m.where, maxQuoted))
		}
	}
	f.models = specs
	switch len(specs) {
	case 0:
		return nil
	case 1:
		return takeOneModel(f, specs[0])
	}
	if len(specs) > maxModels {
		return fmt.Errorf("%d models given: at most %d per run", len(specs), maxModels)
	}
	if f.Workers.distributed() {
		return errors.New("--workers shares one model's load among processes: run several models without --workers")
	}
	names := make([]string, len(specs))
	for i, m := range specs {
		names[i] = m.name
	}
	f.Model = strings.Join(names, ",")
	return nil
}

// takeOneModel makes a single model's spec the run's flags.
func takeOneModel(f *Config, m modelSpec) error {
	f.Model = m.name
	if m.version != "" {
		if f.ModelVersion != "" && f.ModelVersion != m.version {
			return fmt.Errorf("-x %s and %s give two versions: give one", textsafe.Bound(f.ModelVersion), textsafe.Excerpt(m.where, maxQuoted))
		}
		f.ModelVersion = m.version
	}
	f.applySpec(m)
	return nil
}

// applySpec puts a model's own settings in place of the run's flags.
func (f *Config) applySpec(m modelSpec) {
	switch m.load.Mode {
	case load.Concurrency:
		f.Concurrency, f.RequestRate = m.load.Concurrency, 0
		f.Given["concurrency"], f.Given["request-rate"] = true, false
	case load.Rate:
		f.RequestRate, f.Concurrency = m.load.Rate, 0
		f.Given["request-rate"], f.Given["concurrency"] = true, false
		if m.load.Distribution != "" {
			f.Distribution = string(m.load.Distribution)
		}
	}
	if m.batch > 0 {
		f.BatchSize = m.batch
	}
	if len(m.shapes) > 0 {
		f.Shapes = m.shapes
	}
	if m.inputData != "" {
		f.InputData = m.inputData
	}
	if m.streaming != nil {
		f.Streaming = *m.streaming
	}
	if m.stages != nil {
		f.Shape.plan = m.stages
	}
}

// forModel is the run's flags as one model of a run over several sees
// them: its own settings in place of the run's.
func (f *Config) forModel(m modelSpec) *Config {
	mf := *f
	mf.Given = maps.Clone(f.Given)
	mf.Model, mf.models = m.name, nil
	if m.version != "" {
		mf.ModelVersion = m.version
	}
	mf.applySpec(m)
	return &mf
}

// several reports whether the run is over several models.
func (f *Config) several() bool { return len(f.models) > 1 }

// modelNames are the names of the run's models, in the order given.
func (f *Config) modelNames() []string {
	if !f.several() {
		return []string{f.Model}
	}
	names := make([]string, len(f.models))
	for i, m := range f.models {
		names[i] = m.name
	}
	return names
}

// csvPathFor is model's CSV file of a run over several models: -f
// out.csv writes out.MODEL.csv for each, since perf_analyzer's CSV is of
// one model.
func csvPathFor(path, model string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + fileSafe(model) + ext
}

// fileSafe is a model's name (or version) as part of a file name: no
// path separators.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, name)
}
