package sim

import (
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/pb"
)

// The framework-free backends the simulator emulates: Triton's identity,
// repeat and square backends and its sequence and dyna_sequence test
// backends (server/src/test).
const (
	backendIdentity     = "identity"
	backendRepeat       = "repeat"
	backendSquare       = "square"
	backendSequence     = "sequence"
	backendDynaSequence = "dyna_sequence"
)

// validateBackendConfig checks a configuration as the model's backend does
// when the model loads (its ValidateModelConfig), with its messages; a
// backend the simulator does not emulate accepts any configuration.
func validateBackendConfig(cfg *pb.ModelConfig) *ConfigError {
	var msg string
	switch cfg.Backend {
	case backendIdentity:
		msg = validateIdentityConfig(cfg)
	case backendRepeat:
		msg = validateRepeatConfig(cfg)
	case backendSquare:
		msg = validateSquareConfig(cfg)
	case backendSequence, backendDynaSequence:
		if cfg.GetSequenceBatching() == nil {
			return &ConfigError{Model: cfg.Name, Load: true, Code: codes.Internal,
				Msg: "attempt to access non-existing object member 'sequence_batching'"}
		}
		msg = validateSequenceBackendConfig(cfg)
	}
	if msg == "" {
		return nil
	}
	return loadError(cfg.Name, "%s", composed(msg))
}

// shapeString is a shape as the backends print it: "[1,-1]".
func shapeString(dims []int64) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// ioShape is an input's or output's shape as the identity backend reads
// it: the reshape when there is one, else the dims.
func ioShape(dims []int64, reshape *pb.ModelTensorReshape) []int64 {
	if reshape != nil {
		return reshape.Shape
	}
	return dims
}

// validateIdentityConfig is the identity backend's check: INPUT<i> and
// OUTPUT<i> pairs of one datatype and shape.
func validateIdentityConfig(cfg *pb.ModelConfig) string {
	if len(cfg.Input) != len(cfg.Output) {
		return "model configuration must have equal input/output pairs"
	}
	type info struct {
		dtype pb.DataType
		shape []int64
	}
	ins, outs := map[string]info{}, map[string]info{}
	for i, in := range cfg.Input {
		out := cfg.Output[i]
		if !strings.HasPrefix(in.Name, "INPUT") {
			return "expected input name to follow INPUT<index> pattern, got '" + textsafe.Bound(in.Name) + "'"
		}
		if !strings.HasPrefix(out.Name, "OUTPUT") {
			return "expected output name to follow OUTPUT<index> pattern, got '" + textsafe.Bound(out.Name) + "'"
		}
		ins[strings.TrimPrefix(in.Name, "INPUT")] = info{in.DataType, ioShape(in.Dims, in.Reshape)}
		outs[strings.TrimPrefix(out.Name, "OUTPUT")] = info{out.DataType, ioShape(out.Dims, out.Reshape)}
	}
	keys := make([]string, 0, len(outs))
	for k := range outs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out := outs[k]
		in, ok := ins[k]
		switch {
		case !ok:
			return "expected input and output indices to match"
		case in.dtype != out.dtype:
			return "expected input and output datatype to match, got " + in.dtype.String() + " and " + out.dtype.String()
		case !slices.Equal(in.shape, out.shape):
			return "expected input and output shape to match, got " + shapeString(in.shape) + " and " + shapeString(out.shape)
		}
	}
	return ""
}

// validateRepeatConfig is the repeat backend's check: no batching, inputs
// IN, DELAY and WAIT, outputs OUT and IDX.
func validateRepeatConfig(cfg *pb.ModelConfig) string {
	if cfg.MaxBatchSize != 0 {
		return "repeat backend only supports models with max_batch_size == 0"
	}
	if len(cfg.Input) != 3 {
		return "expected 3 inputs, got " + strconv.Itoa(len(cfg.Input))
	}
	if len(cfg.Output) != 2 {
		return "expected 2 outputs, got " + strconv.Itoa(len(cfg.Output))
	}
	in, delay, wait, out, idx := cfg.Input[0], cfg.Input[1], cfg.Input[2], cfg.Output[0], cfg.Output[1]
	for _, c := range []struct{ got, want, what string }{
		{in.Name, "IN", "first input"}, {delay.Name, "DELAY", "second input"}, {wait.Name, "WAIT", "third input"},
		{out.Name, "OUT", "first output"}, {idx.Name, "IDX", "second output"},
	} {
		if c.got != c.want {
			return "expected " + c.what + " tensor name to be " + c.want + ", got " + c.got
		}
	}
	switch {
	case len(in.Dims) != 1:
		return "expected IN shape to have one dimension, got " + shapeString(in.Dims)
	case !slices.Equal(in.Dims, delay.Dims):
		return "expected IN and DELAY shape to match, got " + shapeString(in.Dims) + " and " + shapeString(delay.Dims)
	case !isShape1(wait.Dims):
		return "expected WAIT shape to be [1], got " + shapeString(wait.Dims)
	case !isShape1(out.Dims):
		return "expected OUT shape to be [1], got " + shapeString(out.Dims)
	case !isShape1(idx.Dims):
		return "expected IDX shape to be [1], got " + shapeString(idx.Dims)
	}
	for _, c := range []struct {
		name      string
		got, want pb.DataType
	}{
		{"IN", in.DataType, pb.DataType_TYPE_INT32}, {"DELAY", delay.DataType, pb.DataType_TYPE_UINT32},
		{"WAIT", wait.DataType, pb.DataType_TYPE_UINT32}, {"OUT", out.DataType, pb.DataType_TYPE_INT32},
		{"IDX", idx.DataType, pb.DataType_TYPE_UINT32},
	} {
		if c.got != c.want {
			return "expected " + c.name + " datatype to be " + strings.TrimPrefix(c.want.String(), "TYPE_") + ", got " + c.got.String()
		}
	}
	return ""
}

func isShape1(dims []int64) bool { return len(dims) == 1 && dims[0] == 1 }

// validateSquareConfig is the square backend's check: INT32 IN [1] and
// OUT [1].
func validateSquareConfig(cfg *pb.ModelConfig) string {
	if len(cfg.Input) != 1 {
		return "expected 1 input, got " + strconv.Itoa(len(cfg.Input))
	}
	if len(cfg.Output) != 1 {
		return "expected 1 output, got " + strconv.Itoa(len(cfg.Output))
	}
	in, out := cfg.Input[0], cfg.Output[0]
	switch {
	case in.Name != "IN":
		return "expected first input tensor name to be IN, got " + in.Name
	case out.Name != "OUT":
		return "expected first output tensor name to be OUT, got " + out.Name
	case !isShape1(in.Dims):
		return "expected IN shape to be [1], got " + shapeString(in.Dims)
	case !isShape1(out.Dims):
		return "expected OUT shape to be [1], got " + shapeString(out.Dims)
	case in.DataType != pb.DataType_TYPE_INT32:
		return "expected IN datatype to be INT32, got " + in.DataType.String()
	case out.DataType != pb.DataType_TYPE_INT32:
		return "expected OUT datatype to be INT32, got " + out.DataType.String()
	}
	return ""
}

// validateSequenceBackendConfig is the sequence and dyna_sequence
// backends' check: their control inputs, and one INT32 vector INPUT and
// OUTPUT of one length.
func validateSequenceBackendConfig(cfg *pb.ModelConfig) string {
	controls := cfg.GetSequenceBatching().ControlInput
	names := make([]string, len(controls))
	for i, c := range controls {
		names[i] = c.Name
	}
	if cfg.Backend == backendSequence {
		if len(names) != 2 || !(names[0] == "START" && names[1] == "READY" || names[0] == "READY" && names[1] == "START") {
			return "'START' and 'READY' must be configured as the control inputs"
		}
	} else {
		const want = "'START', 'END, 'READY' and 'CORRID' must be configured as the control inputs"
		if len(names) != 4 {
			return want
		}
		// The backend accepts the names when any one of them is there, and
		// reads CORRID's type where it finds CORRID (past the end when it
		// finds none).
		if !slices.ContainsFunc(names, func(n string) bool { return n == "START" || n == "END" || n == "READY" || n == "CORRID" }) {
			return want
		}
		pos := slices.Index(names, "CORRID")
		if pos < 0 {
			return "attempt to access non-existing array index '4'"
		}
		if c := controls[pos].Control; len(c) == 0 || c[0].DataType != pb.DataType_TYPE_UINT64 && c[0].DataType != pb.DataType_TYPE_STRING {
			return "model CORRID control input must have TYPE_UINT64 or TYPE_STRING data-type"
		}
	}
	if len(cfg.Input) != 1 {
		return "model must have input 'INPUT' with vector shape, any length"
	}
	in := cfg.Input[0]
	switch {
	case len(in.Dims) != 1:
		return "model must have one input 'INPUT' with vector shape, any length"
	case in.DataType != pb.DataType_TYPE_INT32:
		return "model input must have TYPE_INT32 data-type"
	case in.Name != "INPUT":
		return "model input must be named 'INPUT'"
	case len(cfg.Output) != 1:
		return "model must have one output 'OUTPUT' with vector shape, any length"
	}
	out := cfg.Output[0]
	switch {
	case len(out.Dims) != 1 || out.Dims[0] != in.Dims[0]:
		return "model must have output 'OUTPUT' with shape matching 'INPUT'"
	case out.DataType != pb.DataType_TYPE_INT32:
		return "model output must have TYPE_INT32 data-type"
	case out.Name != "OUTPUT":
		return "model output must be named 'OUTPUT'"
	}
	return ""
}
