package sim

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// checkLoadConfig checks a load request's "config" parameter, Triton's
// model configuration override, as Triton's model repository does: a JSON
// model configuration (ModelConfig's JSON form, as in config.pbtxt) with no
// field ModelConfig lacks, values that fit their fields (max_batch_size is
// an int32) and a max_batch_size that is not negative. The simulator loads
// its own description whatever a valid override says, but one Triton
// refuses is refused with Triton's answer (INTERNAL, "failed to load ...,
// failed to poll from model repository") and, after it, the reason Triton
// only logs; so is one past the simulator's limits (instances, sequence
// slots, a tensor's bytes), which Triton may try to serve (100000000
// instances of one model crashed the real server).
func (e *Engine) checkLoadConfig(model, config string) error {
	ngpu := len(e.gpus) // fixed at start: no lock needed
	var cfg pb.ModelConfig
	if err := protojson.Unmarshal([]byte(config), &cfg); err != nil {
		// protobuf writes "proto:" and a space or a no-break space.
		why := strings.TrimLeft(strings.TrimPrefix(err.Error(), "proto:"), " \u00a0")
		return loadFailed(model, "Invalid config override: "+protoFieldNames(why))
	}
	if cfg.GetMaxBatchSize() < 0 {
		return loadFailed(model, fmt.Sprintf("'max_batch_size' must be non-negative value for %s", textsafe.Bound(model)))
	}
	if err := overrideSpec(&cfg).checkLimits(ngpu); err != nil {
		return loadFailed(model, "config override: "+err.Error())
	}
	return nil
}

// protoFieldNames writes the field names protojson's errors give in their
// JSON form (maxBatchSize) as config.pbtxt and Triton write them
// (max_batch_size).
func protoFieldNames(msg string) string {
	head, rest, ok := strings.Cut(msg, " field ")
	if !ok {
		return msg
	}
	name, tail, _ := strings.Cut(rest, ":")
	var b strings.Builder
	for _, r := range name {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	if tail != "" || strings.Contains(rest, ":") {
		return head + " field " + b.String() + ":" + tail
	}
	return head + " field " + b.String()
}

// loadFailed is Triton's answer to a load that failed, with why.
func loadFailed(model, why string) error {
	return &kserve.Error{Code: codes.Internal, Message: fmt.Sprintf(
		"failed to load '%s', failed to poll from model repository: %s", textsafe.Bound(model), textsafe.Excerpt(why, 400))}
}

// overrideSpec is what of an override the simulator's limits bound.
func overrideSpec(cfg *pb.ModelConfig) ModelSpec {
	spec := ModelSpec{MaxBatchSize: int(cfg.GetMaxBatchSize())}
	for _, g := range cfg.GetInstanceGroup() {
		gpus := make([]int, len(g.GetGpus()))
		for i, id := range g.GetGpus() {
			gpus[i] = int(id)
		}
		spec.InstanceGroups = append(spec.InstanceGroups, InstanceGroupSpec{Count: int(g.GetCount()), Kind: g.GetKind().String(), GPUs: gpus})
	}
	if sb := cfg.GetSequenceBatching(); sb != nil {
		spec.SequenceBatching = &SequenceBatchingSpec{}
		if o := sb.GetOldest(); o != nil {
			spec.SequenceBatching.Oldest = &SequenceOldestSpec{MaxCandidateSequences: int(o.GetMaxCandidateSequences())}
		}
	}
	for _, in := range cfg.GetInput() {
		spec.Inputs = append(spec.Inputs, TensorSpec{Name: in.GetName(), DataType: in.GetDataType().String(), Dims: in.GetDims()})
	}
	for _, out := range cfg.GetOutput() {
		spec.Outputs = append(spec.Outputs, TensorSpec{Name: out.GetName(), DataType: out.GetDataType().String(), Dims: out.GetDims()})
	}
	return spec
}

// errConfigNotString is Triton's HTTP answer to a "config" parameter that
// is not a string.
var errConfigNotString = &kserve.Error{Code: codes.Internal, Message: "attempt to access JSON non-string as string"}

// errConfigNotStringParam is Triton's gRPC answer to a "config" parameter
// that is not a string_param.
var errConfigNotStringParam = &kserve.Error{Code: codes.InvalidArgument, Message: "invalid value type for load parameter 'config', expected string_param."}

// grpcLoadConfig is the "config" parameter of a gRPC load request: its
// string, whether there is one, and Triton's answer to one that is no
// string_param.
func grpcLoadConfig(req *pb.RepositoryModelLoadRequest) (string, bool, error) {
	p, ok := req.GetParameters()["config"]
	if !ok {
		return "", false, nil
	}
	s, isStr := p.GetParameterChoice().(*pb.ModelRepositoryParameter_StringParam)
	if !isStr {
		return "", true, errConfigNotStringParam
	}
	return s.StringParam, true, nil
}
