package sim

import (
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// LoadModelConfig loads a model with a configuration override, as Triton's
// repository API does with a load's "config" parameter (a ModelConfig as
// JSON), in explicit model control mode. The override replaces the
// model's whole configuration, auto-completed and normalized as Triton
// does (an empty name is the model's); one Triton refuses fails with its
// answer: "failed to load 'M', failed to poll from model repository" for
// what it finds while reading the repository (bad JSON, an unknown field,
// a negative max_batch_size, a preferred batch size over the maximum, a
// name that is not the model's, ...), "load failed for model 'M': version
// N is at UNAVAILABLE state: ..." for what it finds when the model loads
// (the backend's checks, instance groups); the loaded model then serves on
// unchanged.
//
// A model described in JSON keeps its latency model, behaviour and memory
// under the override; a model read from a directory is what the override
// says. When the override differs from the serving configuration only in
// its instance groups, the versions are updated in place and keep their
// statistics; otherwise they are replaced, and statistics start from zero.
// Requests in flight finish on the configuration they started on. A later
// load without an override keeps the override while the model stays
// loaded (as Triton 2.73 does); after an unload it loads the repository's
// configuration.
func (e *Engine) LoadModelConfig(name, config string) error {
	e.mu.Lock()
	old, err := e.checkLoad(name)
	if err != nil {
		e.mu.Unlock()
		return err
	}
	nm, err := e.overrideModel(old, config)
	if err != nil {
		defer e.mu.Unlock()
		var ce *ConfigError
		if !errors.As(err, &ce) {
			return err
		}
		if ce.Load && old.versions == nil {
			// Its versions are listed UNAVAILABLE for the reason.
			old.loaded, old.loadFailed = true, ce.status()
		}
		return ce.answer(old.source.versions())
	}
	scheds, le := e.swap(old, nm)
	e.mu.Unlock()
	for _, s := range scheds {
		s.drain()
	}
	if le != nil {
		return le.loadError()
	}
	return nil
}

// checkLoad is what Triton checks of every load before it reads the
// model: the mode, the name, the repository; the caller holds e.mu.
func (e *Engine) checkLoad(name string) (*model, error) {
	if e.opts.ModelControl != ModelControlExplicit {
		return nil, errControlDisabled
	}
	if strings.TrimSpace(name) == "" {
		return nil, &kserve.Error{Code: codes.InvalidArgument, Message: "Model name cannot be empty. Please enter a valid name to deploy."}
	}
	m, ok := e.models[name]
	if !ok {
		return nil, errPollFailed(name)
	}
	if e.closed {
		return nil, errStopping
	}
	e.explicit[name] = true
	return m, nil
}

// overrideModel makes the model an override describes, in place of old;
// the caller holds e.mu.
func (e *Engine) overrideModel(old *model, config string) (*model, error) {
	name := old.name
	cfg, err := parseConfigJSON(config)
	if err != nil {
		return nil, pollError(name, "Invalid config override: %v", err)
	}
	if err := autoComplete(cfg, name, old.source.files); err != nil {
		return nil, err
	}
	spec, err := specFromCompleted(cfg, name)
	if err != nil {
		return nil, err
	}
	spec.Versions = old.source.versions()
	spec.Source, spec.files = old.source.Source, old.source.files
	if old.source.Config == nil {
		spec = inheritSimulation(spec, old.source)
	}
	// Instance groups are checked when the model is made, in Triton's
	// words.
	if err := spec.check(MaxGPUs); err != nil {
		return nil, loadError(name, "the simulator cannot serve this configuration: %v", err)
	}
	if err := spec.checkLimits(len(e.gpus)); err != nil {
		return nil, loadError(name, "the simulator cannot serve this configuration: %v", err)
	}
	nm, err := newModel(spec, e.gpus)
	if err != nil {
		var ce *ConfigError
		if !errors.As(err, &ce) {
			ce = loadError(name, "%v", err)
		}
		// An update in place that fails leaves the version serving:
		// Triton reports it at READY state.
		ce.serving = old.versions != nil && sameButInstances(old.config, spec.Config)
		return nil, ce
	}
	nm.source = old.source
	nm.override = true
	return nm, nil
}

// inheritSimulation keeps, under an override of a model described in JSON,
// what a configuration does not say: how the model computes, how long it
// takes, its memory and its output labels.
func inheritSimulation(spec, source ModelSpec) ModelSpec {
	spec.emulate = false
	spec.Behaviour = source.Behaviour
	spec.Latency = source.Latency
	spec.MemoryBytes = source.MemoryBytes
	spec.LLM = source.LLM
	for i, out := range spec.Outputs {
		for _, o := range source.Outputs {
			if o.Name == out.Name && len(o.Labels) > 0 {
				spec.Outputs[i].Labels = o.Labels
			}
		}
	}
	return spec
}

// versions are the spec's versions, 1 when it names none.
func (m ModelSpec) versions() []int64 {
	if len(m.Versions) == 0 {
		return []int64{1}
	}
	return m.Versions
}

// swap puts nm in old's place and loads it: in place of old's versions
// when only the instance groups differ (they keep their statistics), else
// afresh; an ensemble always afresh, with its composing models, and if it
// fails Triton's checks it is left unloaded, with the reason returned. The
// loaded ensembles that run the model reload (reloadDependents). It
// returns old's schedulers, to drain once e.mu is released; the caller
// holds e.mu.
func (e *Engine) swap(old, nm *model) ([]*scheduler, *ensembleLoadError) {
	var keep map[int64]*statistics
	if !nm.ensemble && old.versions != nil && sameButInstances(old.config, nm.config) {
		keep = map[int64]*statistics{}
		for _, mv := range old.versions {
			keep[mv.version] = mv.stats
		}
	}
	scheds := e.unload(old)
	nm.loaded = old.loaded
	e.models[nm.name] = nm
	e.linkEnsembles()
	var le *ensembleLoadError
	if nm.ensemble {
		var sc []*scheduler
		sc, le = e.loadTree(nm, map[*model]bool{})
		scheds = append(scheds, sc...)
	} else {
		e.loadWith(nm, keep)
	}
	scheds = append(scheds, e.reloadDependents(nm.name)...)
	return append(scheds, e.unloadDependents()...), le
}

// sameButInstances reports whether two configurations differ at most in
// their instance groups and version policy, which Triton applies to a
// loaded model without reloading it (ConfigChangeRequiresReload).
func sameButInstances(a, b *pb.ModelConfig) bool {
	x, y := proto.Clone(a).(*pb.ModelConfig), proto.Clone(b).(*pb.ModelConfig)
	for _, c := range []*pb.ModelConfig{x, y} {
		c.InstanceGroup, c.VersionPolicy = nil, nil
		if !c.GetResponseCache().GetEnable() {
			c.ResponseCache = nil
		}
		normalizeConfig(c)
	}
	return proto.Equal(x, y)
}
