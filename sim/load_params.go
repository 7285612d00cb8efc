package sim

import (
	"encoding/json"
	"fmt"

	"github.com/tritontop/tritontop/triton/pb"
)

// checkLoadConfig checks a load request's "config" parameter, Triton's
// model configuration override: a JSON object in a string. The simulator
// loads its own description whatever the override says, but one that is
// not a configuration at all is refused, as Triton refuses it, rather than
// answered as a success.
func checkLoadConfig(model string, config any, present bool) error {
	if !present {
		return nil
	}
	s, ok := config.(string)
	if !ok {
		return invalidArg("failed to load '%s': the 'config' parameter must be a string holding the model configuration as JSON", model)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		return invalidArg("failed to load '%s': the 'config' parameter is not a JSON model configuration (%s)", model, jsonErrorText(err))
	}
	return nil
}

// jsonErrorText is a JSON error without the input it quotes, cut short.
func jsonErrorText(err error) string {
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:120] + "…"
	}
	return fmt.Sprintf("%q", msg)
}

// grpcLoadConfig is the "config" parameter of a gRPC load request.
func grpcLoadConfig(req *pb.RepositoryModelLoadRequest) (any, bool) {
	p, ok := req.GetParameters()["config"]
	if !ok {
		return nil, false
	}
	if s, isStr := p.GetParameterChoice().(*pb.ModelRepositoryParameter_StringParam); isStr {
		return s.StringParam, true
	}
	return p.GetParameterChoice(), true
}
