package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// ModelControlMode is Triton's --model-control-mode: whether clients may
// load and unload models.
type ModelControlMode string

// Model control modes.
const (
	// ModelControlNone loads every model at start and refuses load and
	// unload requests; it is Triton's default, and the zero value means it.
	ModelControlNone ModelControlMode = "none"
	// ModelControlPoll loads every model at start and refuses load and
	// unload requests; Triton would also reload models whose files change,
	// which a built-in repository never does.
	ModelControlPoll ModelControlMode = "poll"
	// ModelControlExplicit loads only EngineOptions.StartupModels at start
	// and lets clients load and unload models.
	ModelControlExplicit ModelControlMode = "explicit"
)

// ParseModelControlMode checks a --model-control-mode value.
func ParseModelControlMode(s string) (ModelControlMode, error) {
	switch m := ModelControlMode(strings.ToLower(s)); m {
	case ModelControlNone, ModelControlPoll, ModelControlExplicit:
		return m, nil
	case "":
		return ModelControlNone, nil
	}
	return "", fmt.Errorf("model control mode %s: use none, poll or explicit", textsafe.Quote(s))
}

// errControlDisabled is Triton's answer to load and unload requests in the
// modes none and poll (it names polling in both).
var errControlDisabled = &kserve.Error{Code: codes.Unavailable,
	Message: "explicit model load / unload is not allowed if polling is enabled"}

// startupModels says which models load at start: all of them unless the
// mode is explicit, then those named ("*" for all). Unknown names are an
// error, as they fail Triton's start.
func (e *Engine) startupModels() ([]string, error) {
	if e.opts.ModelControl != ModelControlExplicit {
		return e.names, nil
	}
	var out []string
	for _, name := range e.opts.StartupModels {
		if name == "*" {
			return e.names, nil
		}
		if _, ok := e.models[name]; !ok {
			return nil, fmt.Errorf("startup model %s is not in the model repository (it has %s)", textsafe.Quote(name), strings.Join(e.names, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// RepositoryIndex lists the repository's models as Triton does: every
// version with its state (READY, LOADING during a slow start, UNAVAILABLE
// with reason "unloaded" once unloaded), and a model never loaded by its
// name alone. readyOnly keeps the READY versions.
func (e *Engine) RepositoryIndex(readyOnly bool) []*pb.RepositoryIndexResponse_ModelIndex {
	e.mu.RLock()
	defer e.mu.RUnlock()
	state := "READY"
	if e.starting() {
		state = "LOADING"
	}
	if e.closed {
		state = "UNAVAILABLE"
	}
	var out []*pb.RepositoryIndexResponse_ModelIndex
	for _, name := range e.names {
		m := e.models[name]
		switch {
		case !m.loaded:
			if !readyOnly {
				out = append(out, &pb.RepositoryIndexResponse_ModelIndex{Name: name})
			}
		case m.versions == nil:
			reason := "unloaded"
			if m.loadFailed != "" {
				reason = m.loadFailed
			}
			if !readyOnly {
				for _, v := range m.spec.Versions {
					out = append(out, &pb.RepositoryIndexResponse_ModelIndex{Name: name,
						Version: strconv.FormatInt(v, 10), State: "UNAVAILABLE", Reason: reason})
				}
			}
		case readyOnly && state != "READY":
		default:
			for _, v := range m.versions {
				out = append(out, &pb.RepositoryIndexResponse_ModelIndex{Name: name, Version: v.label, State: state})
			}
		}
	}
	return out
}

// LoadModel loads a model of the repository in explicit model control
// mode, as Triton does: an ensemble's composing models (and theirs) first,
// then the ensemble if it passes Triton's checks, with Triton's answer when
// it does not (ensemble_validate.go). Loading a loaded model is a no-op
// (one loaded with a configuration override keeps it, as on Triton 2.73;
// see LoadModelConfig). Statistics start from zero after a load, as on
// Triton. In the other modes it fails with Triton's UNAVAILABLE, and a
// name not in the repository with Triton's INTERNAL "failed to poll".
func (e *Engine) LoadModel(name string) error {
	e.mu.Lock()
	m, err := e.checkLoad(name)
	if err != nil {
		e.mu.Unlock()
		return err
	}
	if m.versions == nil && m.override {
		// Unloaded after an override: the repository's configuration.
		nm, err := newModel(m.source, e.gpus)
		if err != nil {
			e.mu.Unlock()
			return err
		}
		nm.loaded = m.loaded
		e.models[name] = nm
		e.linkEnsembles()
		m = nm
	}
	scheds, le := e.loadTree(m, map[*model]bool{})
	scheds = append(scheds, e.unloadDependents()...)
	e.mu.Unlock()
	for _, s := range scheds {
		s.drain()
	}
	if le != nil {
		return le.loadError()
	}
	return nil
}

// UnloadModel unloads a model in explicit model control mode: new requests
// are refused, and requests already queued finish before its instances
// stop. Unloading a model that is not loaded, or not in the repository,
// does nothing, as on Triton. The ensembles one of whose steps it ran
// are unloaded with it, as on Triton.
func (e *Engine) UnloadModel(name string) error {
	return e.unloadModel(name, false)
}

// UnloadModelAndDependents is UnloadModel with the repository extension's
// unload_dependents: an ensemble's composing models (and theirs) are
// unloaded with it.
func (e *Engine) UnloadModelAndDependents(name string) error {
	return e.unloadModel(name, true)
}

func (e *Engine) unloadModel(name string, dependents bool) error {
	e.mu.Lock()
	if e.opts.ModelControl != ModelControlExplicit {
		e.mu.Unlock()
		return errControlDisabled
	}
	m, ok := e.models[name]
	if !ok {
		e.mu.Unlock()
		return nil
	}
	scheds := e.unload(m)
	delete(e.explicit, name)
	if dependents {
		scheds = append(scheds, e.unloadSteps(m, map[*model]bool{})...)
	}
	scheds = append(scheds, e.unloadDependents()...)
	e.mu.Unlock()
	for _, s := range scheds {
		s.drain()
	}
	return nil
}
