package sim

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// ensembleLoadError is why an ensemble does not load: Triton's message,
// and whether Triton finds it reading the config (poll) or loading the
// ensemble (see ensemble_validate.go).
type ensembleLoadError struct {
	model, msg string
	poll       bool
}

// ensembleError checks an ensemble as Triton does before it loads it; nil
// for other models and for an ensemble that passes. The checks depend on
// the specs alone: the simulator's other models always load.
func (e *Engine) ensembleError(m *model) *ensembleLoadError {
	if !m.ensemble {
		return nil
	}
	if msg := ensembleConfigError(m.spec); msg != "" {
		return &ensembleLoadError{model: m.name, msg: msg, poll: true}
	}
	if msg := e.ensembleDependencyError(m); msg != "" {
		return &ensembleLoadError{model: m.name, msg: msg}
	}
	return nil
}

// loadError is an explicit load's answer for an ensemble that does not
// load, as Triton's repository extension gives it.
func (le *ensembleLoadError) loadError() error {
	if le.poll {
		return &kserve.Error{Code: codes.Internal,
			Message: fmt.Sprintf("failed to load '%s', failed to poll from model repository", textsafe.Bound(le.model))}
	}
	return &kserve.Error{Code: codes.InvalidArgument,
		Message: fmt.Sprintf("load failed for model '%s': %s\n", textsafe.Bound(le.model), textsafe.Excerpt(le.msg, maxConfigMessage))}
}

// startError is the error NewEngine returns when models it must load at
// start do not: each model's message, as Triton logs them before it fails
// to start ("failed to load all models").
func startError(errs []*ensembleLoadError) error {
	msgs := make([]string, len(errs))
	for i, le := range errs {
		msgs[i] = fmt.Sprintf("failed to load '%s': %s", textsafe.Bound(le.model), textsafe.Excerpt(le.msg, maxConfigMessage))
	}
	return fmt.Errorf("model repository: failed to load all models: %s", strings.Join(msgs, "; "))
}

// linkEnsembles links every ensemble's steps to the repository's models
// as they are now; the caller holds e.mu or owns e, and calls it whenever
// it puts a model in another's place. Runs under way keep the steps they
// started with.
func (e *Engine) linkEnsembles() {
	for _, m := range e.models {
		if m.ensemble {
			m.ens.Store(newEnsembleInfo(m.spec, e.models))
		}
	}
}

// loadTree loads m as Triton loads a model with what it depends on: an
// ensemble's composing models (and theirs) first, then the ensemble if it
// passes Triton's checks. An ensemble whose configuration Triton refuses
// loads nothing; one that fails the checks against its composing models
// leaves them loaded and is not loaded itself (unloaded, if it was). It
// returns the schedulers to drain once e.mu is released and why m did not
// load. The caller holds e.mu or owns e.
func (e *Engine) loadTree(m *model, seen map[*model]bool) ([]*scheduler, *ensembleLoadError) {
	if seen[m] {
		return nil, nil
	}
	seen[m] = true
	if !m.ensemble {
		e.load(m)
		return nil, nil
	}
	if msg := ensembleConfigError(m.spec); msg != "" {
		return nil, &ensembleLoadError{model: m.name, msg: msg, poll: true}
	}
	var scheds []*scheduler
	for _, s := range m.ens.Load().steps {
		if s.model != nil {
			sc, _ := e.loadTree(s.model, seen)
			scheds = append(scheds, sc...)
		}
	}
	if le := e.ensembleError(m); le != nil {
		return append(scheds, e.unload(m)...), le
	}
	e.load(m)
	return scheds, nil
}

// reloadDependents reloads the loaded ensembles a step of which runs the
// model name, and those whose steps run them, as Triton reloads the
// ensembles downstream of a model it has loaded anew: their statistics
// start from zero, and one that now fails Triton's checks is unloaded
// (Triton 2.73: a config override of a composing model, even one that
// changes nothing, reloads its ensembles). The caller holds e.mu; the
// schedulers returned are to be drained once it is released.
func (e *Engine) reloadDependents(name string) []*scheduler {
	changed := map[string]bool{name: true}
	runsChanged := func(s ensembleStep) bool { return changed[s.name] }
	var scheds []*scheduler
	for more := true; more; {
		more = false
		for _, n := range e.names {
			m := e.models[n]
			if !m.ensemble || m.versions == nil || changed[n] || !slices.ContainsFunc(m.ens.Load().steps, runsChanged) {
				continue
			}
			changed[n], more = true, true
			scheds = append(scheds, e.unload(m)...)
			if e.ensembleError(m) == nil {
				e.load(m)
			}
		}
	}
	return scheds
}

// unloadDependents unloads the loaded ensembles a step of which names a
// model that is not loaded, until none is left: Triton unloads an ensemble
// whose composing model goes ("ensemble X contains models that are not
// available"). The caller holds e.mu; the schedulers returned are to be
// drained once it is released.
func (e *Engine) unloadDependents() []*scheduler {
	var scheds []*scheduler
	for changed := true; changed; {
		changed = false
		for _, name := range e.names {
			m := e.models[name]
			if !m.ensemble || m.versions == nil {
				continue
			}
			for _, s := range m.ens.Load().steps {
				if s.model.versions == nil {
					scheds = append(scheds, e.unload(m)...)
					changed = true
					break
				}
			}
		}
	}
	return scheds
}

// unloadSteps unloads the models an ensemble's steps name, and theirs: the
// repository extension's unload_dependents. As on Triton, a model loaded
// by its own name (at start or by a load request) stays loaded. The
// caller holds e.mu.
func (e *Engine) unloadSteps(m *model, seen map[*model]bool) []*scheduler {
	if !m.ensemble || seen[m] {
		return nil
	}
	seen[m] = true
	var scheds []*scheduler
	for _, s := range m.ens.Load().steps {
		if s.model != nil && !e.explicit[s.model.name] {
			scheds = append(scheds, e.unloadSteps(s.model, seen)...)
			scheds = append(scheds, e.unload(s.model)...)
		}
	}
	return scheds
}
