package sim

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/pb"
)

// backendOfPlatform is the backend a platform belongs to, for Triton's
// check that a known backend and its platform agree ("" for platforms of
// no known backend).
func backendOfPlatform(platform string) string {
	switch platform {
	case platformTFGraphDef, platformTFSavedModel:
		return backendTensorFlow
	case platformTensorRT:
		return backendTensorRT
	case platformONNX:
		return backendONNX
	case platformLibTorch:
		return backendPyTorch
	case platformTorchAOTI:
		return "pytorch(aoti)"
	}
	return ""
}

// knownBackend reports whether Triton's platform check knows the backend.
func knownBackend(backend string) bool {
	switch backend {
	case backendTensorFlow, backendTensorRT, backendONNX, backendPyTorch:
		return true
	}
	return false
}

// validateConfig checks a normalized configuration as Triton's
// ValidateModelConfig does while it reads the repository; the ensemble's
// steps are not checked here.
func validateConfig(cfg *pb.ModelConfig) *ConfigError {
	name := cfg.Name
	fail := func(format string, args ...any) *ConfigError { return pollError(name, format, args...) }
	switch {
	case name == "":
		return fail("model configuration must specify 'name'")
	case cfg.Backend == "" && cfg.Platform != platformEnsemble:
		return fail("unexpected platform type '%s' for %s", cfg.Platform, name)
	case cfg.Backend != "" && cfg.Platform == platformEnsemble:
		return fail("Ensemble model '%s' must have platform type '%s' and empty backend type", name, cfg.Platform)
	case knownBackend(cfg.Backend) && backendOfPlatform(cfg.Platform) != cfg.Backend:
		return fail("unexpected 'platform' and 'backend' pair, got:%s, %s", cfg.Platform, cfg.Backend)
	case cfg.MaxBatchSize < 0:
		return fail("'max_batch_size' must be non-negative value for %s", name)
	case cfg.VersionPolicy == nil:
		return fail("must specify 'version policy' for %s", name)
	}
	if err := validateDynamicBatching(cfg); err != nil {
		return err
	}
	if err := validateSequenceBatching(cfg); err != nil {
		return err
	}
	if cfg.GetEnsembleScheduling() == nil && cfg.Platform == platformEnsemble {
		return fail("ensemble scheduling must be set for ensemble %s whose platform is %s", name, platformEnsemble)
	}
	if cfg.GetModelTransactionPolicy().GetDecoupled() && cfg.GetResponseCache().GetEnable() {
		return fail("Response Cache does not currently support model %s with 'decoupled' transaction policy. Please disable the response cache.", name)
	}
	return nil
}

func validateDynamicBatching(cfg *pb.ModelConfig) *ConfigError {
	db := cfg.GetDynamicBatching()
	if db == nil {
		return nil
	}
	name := cfg.Name
	for _, size := range db.PreferredBatchSize {
		if size <= 0 {
			return pollError(name, "dynamic batching preferred size must be positive for %s", name)
		}
		if size > cfg.MaxBatchSize {
			return pollError(name, "dynamic batching preferred size must be <= max batch size for %s", name)
		}
	}
	if levels := db.PriorityLevels; levels != 0 {
		if db.DefaultPriorityLevel == 0 || db.DefaultPriorityLevel > levels {
			return pollError(name, "default priority level must be in range [1, %d] for %s", levels, name)
		}
		for level := range db.PriorityQueuePolicy {
			if level == 0 || level > levels {
				return pollError(name, "priority queue policy must have priority level in range [1, %d] for %s", levels, name)
			}
		}
	}
	return nil
}

// sequenceControlKinds are the control kinds in Triton's order of checks.
var sequenceControlKinds = []pb.ModelSequenceBatching_Control_Kind{
	pb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_START,
	pb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_END,
	pb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_READY,
	pb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID,
}

func validateSequenceBatching(cfg *pb.ModelConfig) *ConfigError {
	sb := cfg.GetSequenceBatching()
	if sb == nil {
		return nil
	}
	name := cfg.Name
	if cfg.GetResponseCache().GetEnable() {
		return pollError(name, "Response Cache does not currently support model %s with sequence batching scheduler. Please disable the response cache.", name)
	}
	for _, kind := range sequenceControlKinds {
		if err := validateControl(sb, name, kind); err != nil {
			return err
		}
	}
	if o := sb.GetOldest(); o != nil {
		for _, size := range o.PreferredBatchSize {
			if size <= 0 {
				return pollError(name, "sequence batching preferred batch size must be positive for %s", name)
			}
			if size > cfg.MaxBatchSize {
				return pollError(name, "sequence batching preferred batch size must be <= max batch size for %s", name)
			}
		}
	}
	if d := sb.GetDirect(); d != nil && (d.MinimumSlotUtilization < 0 || d.MinimumSlotUtilization > 1) {
		return pollError(name, "sequence batching minimum slot utilization must be in range (0.0, 1.0] for %s", name)
	}
	return nil
}

// validateControl checks one control kind of a sequence batcher as
// Triton's Get{Boolean,Typed}SequenceControlProperties do.
func validateControl(sb *pb.ModelSequenceBatching, name string, kind pb.ModelSequenceBatching_Control_Kind) *ConfigError {
	fail := func(format string, args ...any) *ConfigError { return pollError(name, format, args...) }
	seenTensors := map[string]bool{}
	seen := false
	for _, ci := range sb.ControlInput {
		if ci.Name == "" {
			return fail("sequence batching control tensor must have a name for %s", name)
		}
		if seenTensors[ci.Name] {
			return fail("sequence batching control tensor '%s' is specified for multiple control kinds for %s", ci.Name, name)
		}
		seenTensors[ci.Name] = true
		for _, c := range ci.Control {
			if c.Kind != kind {
				continue
			}
			if seen {
				return fail("sequence batching specifies multiple %s tensors for %s", kind, name)
			}
			seen = true
			if err := validateControlValues(c, name, kind); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateControlValues(c *pb.ModelSequenceBatching_Control, name string, kind pb.ModelSequenceBatching_Control_Kind) *ConfigError {
	i, f, b := len(c.Int32FalseTrue), len(c.Fp32FalseTrue), len(c.BoolFalseTrue)
	if kind == pb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID {
		if i+f+b > 0 {
			return pollError(name, "sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for %s for %s", kind, name)
		}
		switch c.DataType {
		case pb.DataType_TYPE_UINT64, pb.DataType_TYPE_INT64, pb.DataType_TYPE_UINT32, pb.DataType_TYPE_INT32, pb.DataType_TYPE_STRING:
			return nil
		}
		return pollError(name, "unexpected data type for control %s for %s. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING", kind, name)
	}
	set := 0
	for _, n := range []int{i, f, b} {
		if n > 0 {
			set++
		}
	}
	field, n := "int32_false_true", i
	if f > 0 && i == 0 {
		field, n = "fp32_false_true", f
	} else if b > 0 && i == 0 && f == 0 {
		field, n = "bool_false_true", b
	}
	switch {
	case set == 0:
		return pollError(name, "sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for %s for %s", kind, name)
	case set > 1:
		return pollError(name, "sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for %s for %s", kind, name)
	case n != 2:
		return pollError(name, "sequence batching control '%s' must have exactly 2 entries for %s for %s", field, kind, name)
	}
	return nil
}

// validateIO checks the inputs and outputs as Triton's
// ValidateModelIOConfig does when the model loads.
func validateIO(cfg *pb.ModelConfig) *ConfigError {
	wrap := func(msg string) *ConfigError { return loadError(cfg.Name, "%s for %s", composed(msg), cfg.Name) }
	for _, in := range cfg.Input {
		if msg := validateIOShape("model input ", in.Name, in.DataType, in.Dims, in.Reshape, cfg.MaxBatchSize); msg != "" {
			return wrap(msg)
		}
		if (in.Format == pb.ModelInput_FORMAT_NHWC || in.Format == pb.ModelInput_FORMAT_NCHW) && len(in.Dims) != 3 {
			return wrap("model input NHWC/NCHW require 3 dims")
		}
		if cfg.Platform != platformTensorRT && in.IsShapeTensor {
			return wrap("shape tensors are only supported for TensorRT platform")
		}
	}
	for _, out := range cfg.Output {
		if msg := validateIOShape("model output ", out.Name, out.DataType, out.Dims, out.Reshape, cfg.MaxBatchSize); msg != "" {
			return wrap(msg)
		}
		if cfg.Platform != platformTensorRT && out.IsShapeTensor {
			return wrap("shape tensors are only supported for TensorRT platform")
		}
	}
	return nil
}

// validateIOShape is Triton's ValidateIOShape: the message, or "".
func validateIOShape(prefix, name string, dt pb.DataType, dims []int64, reshape *pb.ModelTensorReshape, maxBatch int32) string {
	if name == "" {
		return prefix + "must specify 'name'"
	}
	prefix += "'" + textsafe.Bound(name) + "' "
	switch {
	case dt == pb.DataType_TYPE_INVALID:
		return prefix + "must specify 'data_type'"
	case len(dims) == 0:
		return prefix + "must specify 'dims'"
	case reshape != nil && len(reshape.Shape) == 0 && maxBatch == 0:
		return prefix + "cannot have empty reshape for non-batching model as scalar tensors are not supported"
	}
	for _, d := range dims {
		if d < 1 && d != -1 {
			return prefix + "dimension must be integer >= 1, or -1 to indicate a variable-size dimension"
		}
	}
	if reshape == nil {
		return ""
	}
	for _, d := range reshape.Shape {
		if d < 1 && d != -1 {
			return prefix + "reshape dimensions must be integer >= 1, or -1 to indicate a variable-size dimension"
		}
	}
	dimsSize, reshapeSize := wildcardCount(dims), wildcardCount(reshape.Shape)
	if dimsSize != reshapeSize && (len(reshape.Shape) != 0 || dimsSize != 1) {
		return prefix + "has different size for dims and reshape"
	}
	if dimsSize == -1 {
		a, b := wildcardTrunks(dims), wildcardTrunks(reshape.Shape)
		if len(a) != len(b) {
			return prefix + "has different number of variable-size dimensions for dims and reshape"
		}
		for i := range a {
			if a[i] != b[i] {
				return prefix + "has different size for dims and reshape"
			}
		}
	}
	return ""
}

// wildcardCount is a shape's element count, -1 when it has a variable
// dimension (Triton's GetElementCount; an empty shape counts 0).
func wildcardCount(dims []int64) int64 {
	if len(dims) == 0 {
		return 0
	}
	n := int64(1)
	for _, d := range dims {
		if d == -1 {
			return -1
		}
		n *= d
	}
	return n
}

// wildcardTrunks are the element counts between a shape's variable
// dimensions.
func wildcardTrunks(dims []int64) []int64 {
	out := []int64{}
	cur := int64(1)
	for _, d := range dims {
		if d == -1 {
			out = append(out, cur)
			cur = 1
			continue
		}
		cur *= d
	}
	return append(out, cur)
}

// validateInstanceGroups checks resolved instance groups as Triton's
// ValidateInstanceGroup does: on a server without GPUs (ngpu 0) a KIND_GPU
// group is refused, on one with GPUs a GPU it names must exist.
func validateInstanceGroups(cfg *pb.ModelConfig, ngpu int) *ConfigError {
	name := cfg.Name
	if len(cfg.InstanceGroup) == 0 {
		return loadError(name, "must specify one or more 'instance group's for %s", name)
	}
	for _, g := range cfg.InstanceGroup {
		switch g.Kind {
		case pb.ModelInstanceGroup_KIND_MODEL:
			if len(g.Gpus) > 0 {
				return loadError(name, "instance group %s of model %s has kind KIND_MODEL but specifies one or more GPUs", g.Name, name)
			}
		case pb.ModelInstanceGroup_KIND_GPU:
			if ngpu == 0 {
				return loadError(name, "instance group %s of model %s has kind KIND_GPU but server does not support GPUs", g.Name, name)
			}
			for _, id := range g.Gpus {
				if id < 0 || int(id) >= ngpu {
					return loadError(name, "instance group %s of model %s specifies invalid or unsupported gpu id %d. GPUs with at least the minimum required CUDA compute compatibility of 6.000000 are: %s",
						g.Name, name, id, gpuList(ngpu))
				}
			}
		case pb.ModelInstanceGroup_KIND_CPU:
			if len(g.Gpus) > 0 {
				return loadError(name, "instance group %s of model %s has kind KIND_CPU but specifies one or more GPUs", g.Name, name)
			}
		default:
			return &ConfigError{Model: name, Load: true, Code: codes.Internal,
				Msg: fmt.Sprintf("instance group %s of model %s has unexpected kind KIND_AUTO", g.Name, name)}
		}
	}
	return nil
}

func gpuList(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	return strings.Join(ids, ", ")
}
