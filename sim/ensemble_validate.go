package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// The checks Triton makes of an ensemble, with its messages (Triton 2.73,
// core 73aad7c). They come in two kinds, which Triton reports differently:
//
//   - Config errors (model_config_utils.cc ValidateModelConfig and
//     ValidateEnsembleSchedulingConfig) are found when the model's config
//     is read: the model never enters the repository's dependency graph.
//     An explicit load answers INTERNAL "failed to load 'X', failed to poll
//     from model repository" and only the log has the message; at start the
//     message is logged and the server fails to start.
//   - Dependency errors (model_repository_manager.cc's dependency graph and
//     ensemble_utils.cc ValidateEnsembleConfig) are found when the ensemble
//     loads, its composing models loaded: an explicit load answers
//     INVALID_ARGUMENT "load failed for model 'X': <message>\n".

// ensembleConfigError is Triton's config check of an ensemble spec: "" when
// it passes.
func ensembleConfigError(spec ModelSpec) string {
	name := spec.Name
	if spec.Platform == EnsemblePlatform && spec.Backend != "" {
		return "Ensemble model '" + name + "' must have platform type '" + spec.Platform + "' and empty backend type"
	}
	es := spec.EnsembleScheduling
	switch {
	case es == nil:
		return "ensemble scheduling must be set for ensemble " + name + " whose platform is " + EnsemblePlatform
	case spec.Platform != EnsemblePlatform:
		return "ensemble scheduling cannot be set for model '" + name + "' whose platform is not " + EnsemblePlatform
	case len(spec.InstanceGroups) != 0:
		return "instance group should not be specified for ensemble '" + name + "'"
	case len(es.Steps) == 0:
		return "must specify 'step' for ensemble '" + name + "'"
	}
	g, msg := buildEnsembleGraph(spec)
	if msg != "" {
		return msg
	}
	return g.dataFlowError(spec)
}

// graphTensor is an ensemble tensor in the data-flow graph of Triton's
// config check.
type graphTensor struct {
	name                   string
	written, ready, output bool // output: an ensemble output, written
	prev, next             []*graphTensor
}

type ensembleGraph map[string]*graphTensor

// buildEnsembleGraph links each step's output tensors to its input
// tensors, as Triton's BuildEnsembleGraph does (maps in key order).
func buildEnsembleGraph(spec ModelSpec) (ensembleGraph, string) {
	g := ensembleGraph{}
	node := func(name string) *graphTensor {
		n := g[name]
		if n == nil {
			n = &graphTensor{name: name}
			g[name] = n
		}
		return n
	}
	for i, st := range spec.EnsembleScheduling.Steps {
		where := " in step " + strconv.Itoa(i) + " of ensemble '" + spec.Name + "'"
		switch {
		case st.ModelName == "":
			return nil, "must specify 'model_name'" + where
		case len(st.InputMap) == 0:
			return nil, "must specify 'input_map'" + where
		case len(st.OutputMap) == 0:
			return nil, "must specify 'output_map'" + where
		}
		var outs []*graphTensor
		for _, k := range slices.Sorted(maps.Keys(st.OutputMap)) {
			n := node(st.OutputMap[k])
			if n.written {
				return nil, "ensemble tensor '" + n.name + "' can appear in an output map only once for ensemble '" +
					spec.Name + "' step " + strconv.Itoa(i)
			}
			n.written = true
			outs = append(outs, n)
		}
		for _, k := range slices.Sorted(maps.Keys(st.InputMap)) {
			in := node(st.InputMap[k])
			for _, o := range outs {
				o.prev = append(o.prev, in)
				in.next = append(in.next, o)
			}
		}
	}
	return g, ""
}

// dataFlowError follows the tensors from the ensemble's inputs and finds,
// as Triton's ValidateEnsembleSchedulingConfig does, an input no step
// reads, an output no step writes or that depends on a tensor nothing
// writes (or on a cycle), and a tensor no step reads.
func (g ensembleGraph) dataFlowError(spec ModelSpec) string {
	var queue []*graphTensor
	for _, in := range spec.Inputs {
		n := g[in.Name]
		if n == nil {
			return "ensemble input '" + in.Name + "' for ensemble " + spec.Name + "' is not used"
		}
		n.ready = true
		queue = append(queue, n)
	}
	for ; len(queue) > 0; queue = queue[1:] {
		for _, next := range queue[0].next {
			if next.ready {
				continue
			}
			next.ready = !slices.ContainsFunc(next.prev, func(p *graphTensor) bool { return !p.ready })
			if next.ready {
				queue = append(queue, next)
			}
		}
	}
	for _, out := range spec.Outputs {
		n := g[out.Name]
		if n == nil {
			return "ensemble output '" + out.Name + "' for ensemble " + spec.Name + "' is not used"
		}
		if !n.ready {
			return notWritten(spec.Name, n)
		}
		n.output = true
	}
	for _, name := range slices.Sorted(maps.Keys(g)) {
		n := g[name]
		if !n.output && (!n.ready || len(n.next) == 0) {
			return "ensemble tensor '" + name + "' is unused in ensemble '" + spec.Name + "'"
		}
	}
	return ""
}

// notWritten is Triton's message for an ensemble output that never becomes
// ready: it follows the first tensor not ready back to the source it
// depends on.
func notWritten(ensemble string, out *graphTensor) string {
	msg := "output '" + out.name + "' for ensemble '" + ensemble + "' is not written"
	last, seen := out, map[string]bool{}
	for prev := out.prev; len(prev) > 0; {
		next := prev
		prev = nil
		for _, n := range next {
			if !n.ready && !seen[n.name] {
				seen[n.name] = true
				last, prev = n, n.prev
				break
			}
		}
	}
	if last != out {
		msg += ": at least one of its depending tensors, '" + last.name + "', is not connected"
	}
	return msg
}

// ensembleDependencyError is Triton's check of an ensemble against its
// composing models when it loads: "" when it passes. m's config check has
// passed.
func (e *Engine) ensembleDependencyError(m *model) string {
	info := m.ens.Load()
	var missing []string
	for _, s := range info.steps {
		if s.model == nil || (s.model.ensemble && ensembleConfigError(s.model.spec) != "") {
			missing = append(missing, s.name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return "ensemble " + m.name + " contains models that are not available or ambiguous: " +
			strings.Join(slices.Compact(missing), ", ")
	}
	if msg := e.ensembleCycle(m); msg != "" {
		return msg
	}
	for _, u := range upstreamsOf(m) {
		if msg := e.upstreamError(m, u); msg != "" {
			return msg
		}
	}
	for _, s := range info.steps {
		if s.model.spec.Decoupled {
			return "ensemble '" + m.name + "' contains decoupled model '" + s.name +
				"': the simulator's ensembles do not run decoupled models"
		}
	}
	return ensembleTensorError(m)
}

// upstream is a composing model of an ensemble with the versions its
// steps ask for, ascending (-1: the latest).
type upstream struct {
	model    *model
	versions []int64
}

// upstreamsOf lists m's composing models in the order Triton's dependency
// graph checks them: its upstreams_ is a std::unordered_map, which
// libstdc++ iterates latest insertion first, and Triton inserts them in
// step order; so the model of the last step to name a new one comes first
// (on Triton 2.73, "pipeline" without model_version fails on its second
// step's 'classifier', an ensemble of three such steps on the third's).
func upstreamsOf(m *model) []upstream {
	var ups []upstream
	for i, s := range m.ens.Load().steps {
		v := m.spec.EnsembleScheduling.Steps[i].ModelVersion
		j := slices.IndexFunc(ups, func(u upstream) bool { return u.model == s.model })
		if j < 0 {
			ups = append(ups, upstream{model: s.model})
			j = len(ups) - 1
		}
		if !slices.Contains(ups[j].versions, v) {
			ups[j].versions = append(ups[j].versions, v)
			slices.Sort(ups[j].versions)
		}
	}
	slices.Reverse(ups)
	return ups
}

// upstreamError is Triton's CheckNode for one composing model of m: a
// composing ensemble that fails its own checks, or a version a step asks
// for that the model does not have (Triton names the last such version).
// A step's model_version 0, what a config.pbtxt step without model_version
// says, is version 0, as on Triton.
func (e *Engine) upstreamError(m *model, u upstream) string {
	c := u.model
	if c.ensemble {
		if msg := e.ensembleDependencyError(c); msg != "" {
			return "ensemble '" + m.name + "' depends on '" + c.name + "' which is not valid. Model '" +
				c.name + "' failed with error: " + msg
		}
	}
	msg := ""
	for _, v := range u.versions {
		if v != -1 && !slices.Contains(c.spec.Versions, v) {
			msg = "ensemble '" + m.name + "' depends on '" + c.name + "' whose required version " +
				strconv.FormatInt(v, 10) + " is not loaded."
		}
	}
	return msg
}

// ensembleCycle finds a chain of ensembles whose steps lead back to m, and
// says it as Triton does: "circular dependency between ensembles: m -> ...
// -> x -> m", x the ensemble with a step naming m.
func (e *Engine) ensembleCycle(m *model) string {
	seen := map[*model]bool{}
	var visit func(x *model) *model
	visit = func(x *model) *model {
		seen[x] = true
		for _, s := range x.ens.Load().steps {
			c := s.model
			if c == m {
				return x
			}
			if c != nil && c.ensemble && !seen[c] {
				if last := visit(c); last != nil {
					return last
				}
			}
		}
		return nil
	}
	if last := visit(m); last != nil {
		return "circular dependency between ensembles: " + m.name + " -> ... -> " + last.name + " -> " + m.name
	}
	return ""
}

// tensorNode is an ensemble tensor's datatype and shape as one model
// infers it (ensemble_utils.cc TensorNode).
type tensorNode struct {
	model      string
	dtype      pb.DataType
	dims, full []int64 // full has the batch dimension (-1) of a batching model
}

func newTensorNode(model string, batching bool, datatype string, dims []int64) tensorNode {
	dt, _ := kserve.ParseDataType(datatype)
	n := tensorNode{model: model, dtype: dt, dims: dims}
	if batching {
		n.full = append([]int64{-1}, dims...)
	} else {
		n.full = dims
	}
	return n
}

// consistencyError is Triton's ValidateTensorConsistency: the datatypes
// must be equal and the shapes match, -1 matching any size, with or without
// the batch dimension.
func consistencyError(lhs, rhs tensorNode, prefix string) string {
	if lhs.dtype != rhs.dtype {
		return prefix + "inconsistent data type: " + lhs.dtype.String() + " is inferred from model " + lhs.model +
			" while " + rhs.dtype.String() + " is inferred from model " + rhs.model
	}
	if !dimsMatch(lhs.dims, rhs.dims) && !dimsMatch(lhs.full, rhs.full) {
		return prefix + "inconsistent shape: " + kserve.FormatDims(lhs.full) + " is inferred from model " + lhs.model +
			" while " + kserve.FormatDims(rhs.full) + " is inferred from model " + rhs.model
	}
	return ""
}

// dimsMatch is Triton's CompareDimsWithWildcard.
func dimsMatch(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] != -1 && b[i] != -1 {
			return false
		}
	}
	return true
}

// ensembleTensorError is Triton's ValidateEnsembleConfig without its
// decoupled checks: each composing model batches at least as much as the
// ensemble, each step maps every input of its model and only inputs and
// outputs it has, and every tensor has one datatype and shape whichever
// model says it.
func ensembleTensorError(m *model) string {
	spec := m.spec
	tensors := map[string]tensorNode{}
	batching := spec.MaxBatchSize > 0
	for _, t := range spec.Inputs {
		dims := t.Dims
		if t.Reshape != nil {
			dims = t.Reshape
		}
		tensors[t.Name] = newTensorNode(m.name, batching, t.DataType, dims)
	}
	for _, t := range spec.Outputs {
		dims := t.Dims
		if t.Reshape != nil {
			dims = t.Reshape
		}
		if _, ok := tensors[t.Name]; !ok {
			tensors[t.Name] = newTensorNode(m.name, batching, t.DataType, dims)
		}
	}
	steps := m.ens.Load().steps
	for i, st := range spec.EnsembleScheduling.Steps {
		c := steps[i].model
		if c.spec.MaxBatchSize != 0 && c.spec.MaxBatchSize < spec.MaxBatchSize {
			return fmt.Sprintf("ensemble %s allows maximum batch size %d, but it contains model %s which only allows maximum batch size to be %d",
				m.name, spec.MaxBatchSize, c.name, c.spec.MaxBatchSize)
		}
		if msg := stepMappingError(m.name, st, c, tensors); msg != "" {
			return msg
		}
	}
	return ""
}

// stepMappingError is Triton's ValidateTensorMapping for one step.
func stepMappingError(ensemble string, st EnsembleStepSpec, c *model, tensors map[string]tensorNode) string {
	prefix := "in ensemble " + ensemble + ", "
	batching := c.spec.MaxBatchSize > 0
	for _, k := range slices.Sorted(maps.Keys(st.InputMap)) {
		if _, ok := c.inputIdx[k]; !ok {
			return prefix + "ensemble tensor " + st.InputMap[k] + " is mapping to non-existing input " + k + " in model " + c.name
		}
	}
	for _, t := range c.spec.Inputs {
		v, ok := st.InputMap[t.Name]
		if !ok {
			return prefix + "input " + t.Name + " in model " + c.name + " is not mapped to any ensemble tensors"
		}
		if msg := mapTensor(tensors, v, newTensorNode(c.name, batching, t.DataType, t.Dims), prefix); msg != "" {
			return msg
		}
	}
	for _, k := range slices.Sorted(maps.Keys(st.OutputMap)) {
		if _, ok := c.outputIdx[k]; !ok {
			return prefix + "ensemble tensor " + st.OutputMap[k] + " is mapped from non-existing output " + k + " in model " + c.name
		}
	}
	for _, k := range slices.Sorted(maps.Keys(st.OutputMap)) {
		t := c.spec.Outputs[c.outputIdx[k]]
		if msg := mapTensor(tensors, st.OutputMap[k], newTensorNode(c.name, batching, t.DataType, t.Dims), prefix); msg != "" {
			return msg
		}
	}
	return ""
}

// mapTensor records what a model says of ensemble tensor name, or checks it
// against what was said before.
func mapTensor(tensors map[string]tensorNode, name string, n tensorNode, prefix string) string {
	if have, ok := tensors[name]; ok {
		return consistencyError(have, n, prefix+"ensemble tensor "+name+": ")
	}
	tensors[name] = n
	return ""
}
