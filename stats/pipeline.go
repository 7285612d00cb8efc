package stats

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/pb"
)

// Composing is a composing model of a pipeline: a step of an ensemble
// (ensemble_scheduling.step) or a model a BLS model calls
// (--bls-composing-models). A pipeline's own statistics hold little of its
// time (an ensemble's queue is its scheduler's wait, its compute the steps'
// added up): the time is spent queueing and computing in its composing
// models, which the ServerPoller reads with it.
type Composing struct {
	// Name is the composing model's name.
	Name string
	// Version is the version the step names; "" (an ensemble step's -1,
	// or a BLS model given without a version) is resolved at each read as
	// perf_analyzer does: the version whose queue count grew.
	Version string
	// Steps are a composing ensemble's own composing models.
	Steps []Composing
}

// Limits of a pipeline's composing models, against a hostile server's
// configs: no real pipeline comes near them.
const (
	// MaxComposingDepth is how deep ensembles may nest.
	MaxComposingDepth = 8
	// MaxComposing is how many composing models a pipeline may have, all
	// levels together.
	MaxComposing = 64
)

// ConfigReader reads a model's config; a triton.Client is one.
type ConfigReader interface {
	ModelConfig(ctx context.Context, model, version string) (*pb.ModelConfig, error)
}

// EnsemblePlatform is the platform of an ensemble's config.
const EnsemblePlatform = "ensemble"

// ComposingModels finds the composing models of the model whose config is
// cfg, as perf_analyzer's model parser does: the models bls names (each
// read for steps of its own, should it be an ensemble) and, for an
// ensemble, the models of its ensemble_scheduling steps, each composing
// ensemble's own steps read from its config, recursively. Each level is in
// order of name then version, without duplicates (perf_analyzer keeps them
// in a set). nil for a model that is no pipeline.
func ComposingModels(ctx context.Context, r ConfigReader, cfg *pb.ModelConfig, bls []Composing) ([]Composing, error) {
	n := 0
	return composingOf(ctx, r, cfg, bls, 1, &n)
}

func composingOf(ctx context.Context, r ConfigReader, cfg *pb.ModelConfig, extra []Composing, depth int, n *int) ([]Composing, error) {
	var out []Composing
	add := func(c Composing) error {
		if slices.ContainsFunc(out, func(o Composing) bool { return o.Name == c.Name && o.Version == c.Version }) {
			return nil
		}
		if *n++; *n > MaxComposing {
			return fmt.Errorf("model %s: more than %d composing models", textsafe.Quote(cfg.GetName()), MaxComposing)
		}
		if depth > MaxComposingDepth {
			return fmt.Errorf("model %s: ensembles nested more than %d deep", textsafe.Quote(cfg.GetName()), MaxComposingDepth)
		}
		sub, err := r.ModelConfig(ctx, c.Name, c.Version)
		if err != nil {
			return fmt.Errorf("config of %s, a composing model of %s: %w", textsafe.Quote(c.Name), textsafe.Quote(cfg.GetName()), err)
		}
		if c.Steps, err = composingOf(ctx, r, sub, nil, depth+1, n); err != nil {
			return err
		}
		out = append(out, c)
		return nil
	}
	for _, c := range extra {
		if err := add(Composing{Name: c.Name, Version: c.Version}); err != nil {
			return nil, err
		}
	}
	if cfg.GetPlatform() == EnsemblePlatform {
		for _, st := range cfg.GetEnsembleScheduling().GetStep() {
			v := ""
			if st.GetModelVersion() >= 0 {
				v = strconv.FormatInt(st.GetModelVersion(), 10)
			}
			if err := add(Composing{Name: st.GetModelName(), Version: v}); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(out, func(a, b Composing) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Version, b.Version))
	})
	return out, nil
}

// ParseComposing reads perf_analyzer's --bls-composing-models: a comma
// separated list of model names, each with an optional version after a
// colon ("modelA:3,modelB"); spaces are ignored.
func ParseComposing(s string) ([]Composing, error) {
	s = strings.Join(strings.Fields(s), "")
	var out []Composing
	for _, item := range strings.Split(s, ",") {
		name, version, _ := strings.Cut(item, ":")
		if name == "" {
			return nil, fmt.Errorf("%s names no model: give NAME or NAME:VERSION, comma separated (modelA:3,modelB)", textsafe.Quote(item))
		}
		if version != "" {
			if v, err := strconv.ParseInt(version, 10, 64); err != nil || v < 0 {
				return nil, fmt.Errorf("%s: version %s is not a whole number (NAME:VERSION, as modelA:3)", textsafe.Quote(item), textsafe.Quote(version))
			}
		}
		out = append(out, Composing{Name: name, Version: version})
	}
	return out, nil
}

// composingNames is every model name among cs, at any level.
func composingNames(cs []Composing, into map[string]bool) map[string]bool {
	if into == nil {
		into = map[string]bool{}
	}
	for _, c := range cs {
		into[c.Name] = true
		composingNames(c.Steps, into)
	}
	return into
}

// Decompose sets a pipeline's times from its steps', as perf_analyzer
// reports an ensemble: Queue and each Compute time are the sums of the
// steps' per-request averages (a composing ensemble's own sums, so
// recursively), and Overhead is Request less Queue and Compute, floored at
// 0. Steps without statistics in the span (reset, unavailable) add
// nothing. A ServerStats without Steps is left as it is.
func (s *ServerStats) Decompose() {
	if len(s.Steps) == 0 {
		return
	}
	s.Queue, s.ComputeInput, s.ComputeInfer, s.ComputeOutput = 0, 0, 0, 0
	for i := range s.Steps {
		st := &s.Steps[i]
		if !st.Available || st.Reset {
			continue
		}
		s.Queue += st.Queue
		s.ComputeInput += st.ComputeInput
		s.ComputeInfer += st.ComputeInfer
		s.ComputeOutput += st.ComputeOutput
	}
	s.Overhead = max(0, s.Request-s.Queue-s.Compute())
}

// Pipeline reports whether s is a pipeline's, with its steps' statistics.
func (s *ServerStats) Pipeline() bool { return len(s.Steps) > 0 }
