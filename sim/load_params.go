package sim

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// loadRequest is a load request's parameters once read: the
// configuration override, if any.
type loadRequest struct {
	config    string
	hasConfig bool
}

// errRepositoryName is Triton's answer to a load or unload that names a
// repository.
var errRepositoryName = &kserve.Error{Code: codes.Unimplemented, Message: "'repository_name' specification is not supported"}

// errFileOverride answers a load that carries model files ("file:"
// parameters), which Triton would load from them; the simulator serves
// only the models of its repository.
func errFileOverride(key string) error {
	return &kserve.Error{Code: codes.Unimplemented, Message: fmt.Sprintf(
		"load parameter '%s': the simulator does not load model files; override only the configuration ('config')", textsafe.Bound(key))}
}

// load loads a model with what the request asked.
func (e *Engine) loadRequested(name string, lr loadRequest) error {
	if lr.hasConfig {
		return e.LoadModelConfig(name, lr.config)
	}
	return e.LoadModel(name)
}

// grpcLoadRequest reads a gRPC load request's parameters as Triton's
// frontend does: "config" must be a string, "file:..." bytes, and nothing
// else is taken.
func grpcLoadRequest(req *pb.RepositoryModelLoadRequest) (loadRequest, error) {
	var lr loadRequest
	if req.GetRepositoryName() != "" {
		return lr, errRepositoryName
	}
	for key, p := range req.GetParameters() {
		switch {
		case key == "config":
			s, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_StringParam)
			if !ok {
				return lr, invalidArg("invalid value type for load parameter '%s', expected string_param.", textsafe.Bound(key))
			}
			lr.config, lr.hasConfig = s.StringParam, true
		case strings.HasPrefix(key, "file:"):
			if _, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_BytesParam); !ok {
				return lr, invalidArg("invalid value type for load parameter '%s', expected bytes_param.", textsafe.Bound(key))
			}
			return lr, errFileOverride(key)
		default:
			return lr, invalidArg("unrecognized load parameter '%s'.", textsafe.Bound(key))
		}
	}
	return lr, nil
}

// httpLoadRequest reads an HTTP load request's body as Triton's frontend
// does: every member of "parameters", in order, must be a string; "config"
// is the override, "file:..." a model file, anything else refused.
func httpLoadRequest(body []byte, hold *budgetHold) (loadRequest, error) {
	var lr loadRequest
	if len(body) == 0 {
		return lr, nil
	}
	doc, err := parseBody(body, hold)
	if err != nil {
		return lr, err
	}
	params, ok := doc.find("parameters")
	if !ok {
		return lr, nil
	}
	if !params.isObject() {
		return lr, tjError(tjNotObject)
	}
	params.each(func(k, v jval) bool {
		key, _ := k.asString()
		s, ok := v.asString()
		switch {
		case !ok:
			err = tjError(tjNotString)
		case key == "config":
			lr.config, lr.hasConfig = s, true
		case strings.HasPrefix(key, "file:"):
			err = errFileOverride(key)
		default:
			err = tjError("unexpected error on creating Triton parameter")
		}
		return err == nil
	})
	return lr, err
}

// grpcUnloadDependents reads a gRPC unload request's "unload_dependents"
// parameter as Triton's frontend does: a bool_param, anything else
// refused.
func grpcUnloadDependents(req *pb.RepositoryModelUnloadRequest) (bool, error) {
	p, ok := req.GetParameters()["unload_dependents"]
	if !ok {
		return false, nil
	}
	b, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_BoolParam)
	if !ok {
		return false, invalidArg("invalid value type for 'unload_dependents' parameter, expected bool_param.")
	}
	return b.BoolParam, nil
}

// httpUnloadDependents reads an HTTP unload request's body as Triton's
// frontend does: a body that is not JSON is refused; "unload_dependents"
// in "parameters" counts when it is true, and any other body, member or
// value is a plain unload (Triton 2.73 drops the error of a value that is
// not a bool and unloads the model alone).
func httpUnloadDependents(body []byte, hold *budgetHold) (bool, error) {
	if len(body) == 0 {
		return false, nil
	}
	doc, err := parseBody(body, hold)
	if err != nil {
		return false, err
	}
	params, _ := doc.find("parameters")
	v, _ := params.find("unload_dependents")
	dependents, _ := v.asBool()
	return dependents, nil
}
