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
			if !readyOnly {
				for _, v := range m.spec.Versions {
					out = append(out, &pb.RepositoryIndexResponse_ModelIndex{Name: name,
						Version: strconv.FormatInt(v, 10), State: "UNAVAILABLE", Reason: "unloaded"})
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

// LoadModel loads a model of the repository in explicit model control mode;
// loading a loaded model is a no-op. Statistics start from zero after a
// load, as on Triton. In the other modes it fails with Triton's
// UNAVAILABLE, and a name not in the repository with Triton's INTERNAL
// "failed to poll".
func (e *Engine) LoadModel(name string) error { return e.loadModel(name, nil) }

// loadModel is LoadModel with a configuration override (nil: none), which
// Triton checks once the mode and the name are (checkLoadConfig).
func (e *Engine) loadModel(name string, config *string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opts.ModelControl != ModelControlExplicit {
		return errControlDisabled
	}
	if strings.TrimSpace(name) == "" {
		return &kserve.Error{Code: codes.InvalidArgument, Message: "Model name cannot be empty. Please enter a valid name to deploy."}
	}
	if config != nil {
		if err := e.checkLoadConfig(name, *config); err != nil {
			return err
		}
	}
	m, ok := e.models[name]
	if !ok {
		return &kserve.Error{Code: codes.Internal,
			Message: fmt.Sprintf("failed to load '%s', failed to poll from model repository", textsafe.Bound(name))}
	}
	if e.closed {
		return errStopping
	}
	e.load(m)
	return nil
}

// UnloadModel unloads a model in explicit model control mode: new requests
// are refused, and requests already queued finish before its instances
// stop. Unloading a model that is not loaded, or not in the repository,
// does nothing, as on Triton.
func (e *Engine) UnloadModel(name string) error {
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
	e.mu.Unlock()
	for _, s := range scheds {
		s.drain()
	}
	return nil
}
