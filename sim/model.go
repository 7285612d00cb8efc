package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// model is one model of the repository, loaded or not. Everything but
// versions, loaded, loadFailed and an ensemble's links (ens) is fixed when
// it is made; a load with a configuration override makes a new one in its
// place.
type model struct {
	name       string
	spec       ModelSpec // with defaults filled in
	config     *pb.ModelConfig
	inputs     []tensorInfo
	outputs    []tensorInfo
	inputIdx   map[string]int
	outputIdx  map[string]int
	placements []placement // one per instance
	// seq tells a model with sequence batching; controls are its control
	// inputs.
	seq      bool
	controls controlValues
	// ensemble tells an ensemble (spec.isEnsemble): it has no instances;
	// its requests run its steps.
	ensemble bool
	// ens holds an ensemble's steps, linked to the repository's models;
	// nil for other models. The engine links it anew whenever a model of
	// the repository is replaced (linkEnsembles), so a run takes it once.
	ens atomic.Pointer[ensembleInfo]
	// zeros is the zero buffer a zeros model's outputs share
	// (zeroBytes).
	zeros atomic.Pointer[[]byte]

	// versions are the loaded versions, ascending; nil when unloaded.
	// loaded tells an unloaded model from one never loaded (explicit model
	// control), which Triton does not know until it loads. Both guarded by
	// Engine.mu.
	versions []*modelVersion
	loaded   bool

	// source is the spec as the repository gave it, before defaults; a
	// load without a configuration override goes back to it.
	source ModelSpec
	// override tells a model loaded with a configuration override.
	override bool
	// loadFailed is why the last load of the model, while it was not
	// loaded, failed; its versions are listed UNAVAILABLE with it.
	// Guarded by Engine.mu.
	loadFailed string
	// emu is what the simulator emulates of the model's backend; nil for
	// backends it does not emulate.
	emu *backendEmu
	// identity maps each output to the input it copies, for
	// BehaviourIdentity.
	identity []int
}

// tensorInfo is a model input or output in the forms validation needs.
type tensorInfo struct {
	name     string
	dtype    pb.DataType
	datatype string // protocol string, "BYTES" for TYPE_STRING
	size     int    // bytes per element, -1 for BYTES
	dims     []int64
}

// placement says where one instance runs: a GPU index, or -1 for the CPU.
type placement struct {
	gpu int
}

// modelVersion is one loaded version: its scheduler and statistics.
type modelVersion struct {
	model   *model
	version int64
	label   string // the version as a decimal string
	// stats are shared by the versions an update in place replaces (a
	// load whose override changes only the instance groups).
	stats *statistics
	sched *scheduler
	// held counts the requests the server holds: queued or executing, a
	// decoupled model's until its final response.
	held atomic.Int64
}

func newTensorInfos(specs []TensorSpec) ([]tensorInfo, map[string]int) {
	infos := make([]tensorInfo, len(specs))
	idx := make(map[string]int, len(specs))
	for i, t := range specs {
		dt, _ := kserve.ParseDataType(t.DataType)
		ds := kserve.DataTypeString(dt)
		infos[i] = tensorInfo{name: t.Name, dtype: dt, datatype: ds, size: kserve.ElementSize(ds), dims: slices.Clone(t.Dims)}
		idx[t.Name] = i
	}
	return infos, idx
}

// newModel fills in the defaults of a checked spec and builds the model's
// configuration as Triton would report it after auto-completion. Its
// instance groups are resolved on the GPUs given (none: a server without
// GPUs); a spec made from a configuration gets Triton's checks of them, in
// Triton's words (a *ConfigError).
func newModel(spec ModelSpec, gpus []*gpu) (*model, error) {
	source := spec
	if len(spec.Versions) == 0 {
		spec.Versions = []int64{1}
	}
	spec.Versions = slices.Clone(spec.Versions)
	slices.Sort(spec.Versions)
	spec.Versions = slices.Compact(spec.Versions)
	if spec.Platform == "" && spec.Backend == "" {
		spec.Backend = "python"
	}
	if spec.Behaviour == "" {
		spec.Behaviour = BehaviourClassifier
	}
	if spec.Latency.Exponent == 0 {
		spec.Latency.Exponent = 1
	}
	if len(spec.InstanceGroups) == 0 && !spec.isEnsemble() {
		spec.InstanceGroups = []InstanceGroupSpec{{Count: 1}}
	}
	if sb := spec.SequenceBatching; sb != nil {
		spec.SequenceBatching = sb.withDefaults(spec.MaxBatchSize)
	}
	m := &model{name: spec.Name, source: source}
	if sb := spec.SequenceBatching; sb != nil {
		m.seq = true
		m.controls = newControlValues(sb)
	}
	m.inputs, m.inputIdx = newTensorInfos(spec.Inputs)
	m.outputs, m.outputIdx = newTensorInfos(spec.Outputs)
	if spec.isEnsemble() {
		// An ensemble has no instances: instance groups in its
		// description keep it from loading (ensembleConfigError), and its
		// configuration reports none. The engine links its steps.
		m.ensemble = true
		m.spec = spec
		m.config = configOf(spec)
		return m, nil
	}
	groups, placements := resolveGroups(spec, len(gpus))
	spec.InstanceGroups = groups
	m.placements = placements
	m.spec = spec
	m.config = configOf(spec)
	if spec.Config != nil {
		if err := validateInstanceGroups(m.config, len(gpus)); err != nil {
			return nil, err
		}
	} else if err := checkJSONGroups(spec, len(gpus)); err != nil {
		return nil, err
	}
	if len(m.placements) == 0 {
		return nil, fmt.Errorf("instance_group: no instances")
	}
	m.emu = newBackendEmu(spec)
	m.identityPairs()
	return m, nil
}

// resolveGroups gives each instance group its name, kind, count and GPUs
// as Triton's NormalizeInstanceGroup does (KIND_AUTO is a GPU where there
// are GPUs, else the CPU; a KIND_GPU group without GPUs takes all; a count
// of 0 is 1, or 2 for TensorFlow and ONNX Runtime models on the CPU), and
// places the instances.
func resolveGroups(spec ModelSpec, ngpu int) ([]InstanceGroupSpec, []placement) {
	groups := make([]InstanceGroupSpec, len(spec.InstanceGroups))
	var placements []placement
	for i, g := range spec.InstanceGroups {
		g.GPUs = slices.Clone(g.GPUs)
		if g.Name == "" {
			g.Name = fmt.Sprintf("%s_%d", spec.Name, i)
		}
		switch g.Kind {
		case "", "KIND_AUTO":
			g.Kind = "KIND_GPU"
			if ngpu == 0 || slices.ContainsFunc(g.GPUs, func(id int) bool { return id >= ngpu }) {
				g.Kind = "KIND_CPU"
			}
		}
		if g.Count <= 0 {
			g.Count = 1
			if spec.Config != nil && g.Kind == "KIND_CPU" && (spec.Backend == backendTensorFlow || spec.Backend == backendONNX) {
				g.Count = 2
			}
		}
		if g.Kind == "KIND_GPU" {
			if len(g.GPUs) == 0 {
				for id := range ngpu {
					g.GPUs = append(g.GPUs, id)
				}
			}
			for _, id := range g.GPUs {
				if id >= 0 && id < ngpu {
					for range g.Count {
						placements = append(placements, placement{gpu: id})
					}
				}
			}
		} else {
			if spec.Config == nil {
				g.GPUs = nil
			}
			for range g.Count {
				placements = append(placements, placement{gpu: -1})
			}
		}
		groups[i] = g
	}
	return groups, placements
}

// checkJSONGroups refuses, for a spec described in JSON, a KIND_GPU group
// on a server without GPUs, with Triton's message.
func checkJSONGroups(spec ModelSpec, ngpu int) error {
	for _, g := range spec.InstanceGroups {
		if g.Kind == "KIND_GPU" && ngpu == 0 {
			return fmt.Errorf("instance group %s of model %s has kind KIND_GPU but server does not support GPUs", g.Name, spec.Name)
		}
	}
	return nil
}

// configOf is the configuration the model reports: the spec's own
// (normalized) configuration with its instance groups resolved, or one
// built from a spec described in JSON.
func configOf(spec ModelSpec) *pb.ModelConfig {
	if spec.Config == nil {
		return buildConfig(spec)
	}
	c := proto.Clone(spec.Config).(*pb.ModelConfig)
	if spec.EnsembleScheduling != nil {
		return c
	}
	orig := c.InstanceGroup
	c.InstanceGroup = make([]*pb.ModelInstanceGroup, len(spec.InstanceGroups))
	for i, g := range spec.InstanceGroups {
		ig := &pb.ModelInstanceGroup{}
		if i < len(orig) {
			ig = orig[i]
		}
		ig.Name = g.Name
		ig.Kind = pb.ModelInstanceGroup_Kind(pb.ModelInstanceGroup_Kind_value[g.Kind])
		ig.Count = int32(g.Count)
		ig.Gpus = nil
		for _, id := range g.GPUs {
			ig.Gpus = append(ig.Gpus, int32(id))
		}
		c.InstanceGroup[i] = ig
	}
	return c
}

// buildConfig is the ModelConfig Triton reports for spec.
func buildConfig(spec ModelSpec) *pb.ModelConfig {
	c := &pb.ModelConfig{
		Name:         spec.Name,
		Platform:     spec.Platform,
		Backend:      spec.Backend,
		MaxBatchSize: int32(spec.MaxBatchSize),
	}
	if len(spec.Versions) == 1 {
		c.VersionPolicy = &pb.ModelVersionPolicy{PolicyChoice: &pb.ModelVersionPolicy_Latest_{
			Latest: &pb.ModelVersionPolicy_Latest{NumVersions: 1}}}
	} else {
		c.VersionPolicy = &pb.ModelVersionPolicy{PolicyChoice: &pb.ModelVersionPolicy_Specific_{
			Specific: &pb.ModelVersionPolicy_Specific{Versions: slices.Clone(spec.Versions)}}}
	}
	reshape := func(shape []int64) *pb.ModelTensorReshape {
		if shape == nil {
			return nil
		}
		return &pb.ModelTensorReshape{Shape: slices.Clone(shape)}
	}
	for _, t := range spec.Inputs {
		dt, _ := kserve.ParseDataType(t.DataType)
		c.Input = append(c.Input, &pb.ModelInput{Name: t.Name, DataType: dt, Dims: slices.Clone(t.Dims),
			Format: pb.ModelInput_Format(pb.ModelInput_Format_value[t.Format]), Reshape: reshape(t.Reshape)})
	}
	for _, t := range spec.Outputs {
		dt, _ := kserve.ParseDataType(t.DataType)
		c.Output = append(c.Output, &pb.ModelOutput{Name: t.Name, DataType: dt, Dims: slices.Clone(t.Dims),
			Reshape: reshape(t.Reshape), LabelFilename: t.LabelFilename})
	}
	if sb := spec.SequenceBatching; sb != nil {
		c.SchedulingChoice = &pb.ModelConfig_SequenceBatching{SequenceBatching: sb.proto()}
	}
	if es := spec.EnsembleScheduling; es != nil {
		c.SchedulingChoice = &pb.ModelConfig_EnsembleScheduling{EnsembleScheduling: ensembleProto(es)}
	}
	for k, v := range spec.Parameters {
		if c.Parameters == nil {
			c.Parameters = map[string]*pb.ModelParameter{}
		}
		c.Parameters[k] = &pb.ModelParameter{StringValue: v}
	}
	if db := spec.DynamicBatching; db != nil {
		d := &pb.ModelDynamicBatching{MaxQueueDelayMicroseconds: db.MaxQueueDelayMicroseconds}
		for _, p := range db.PreferredBatchSize {
			d.PreferredBatchSize = append(d.PreferredBatchSize, int32(p))
		}
		if len(d.PreferredBatchSize) == 0 && spec.MaxBatchSize > 0 {
			// Triton fills in the max batch size (core's
			// NormalizeModelConfig); the scheduler batches the same.
			d.PreferredBatchSize = []int32{int32(spec.MaxBatchSize)}
		}
		if db.MaxQueueSize > 0 || db.DefaultTimeoutMicroseconds > 0 || db.AllowTimeoutOverride {
			d.DefaultQueuePolicy = &pb.ModelQueuePolicy{MaxQueueSize: db.MaxQueueSize,
				DefaultTimeoutMicroseconds: db.DefaultTimeoutMicroseconds, AllowTimeoutOverride: db.AllowTimeoutOverride}
		}
		c.SchedulingChoice = &pb.ModelConfig_DynamicBatching{DynamicBatching: d}
	}
	for i, g := range spec.InstanceGroups {
		kind := pb.ModelInstanceGroup_Kind(pb.ModelInstanceGroup_Kind_value[g.Kind])
		name := g.Name
		if name == "" {
			name = fmt.Sprintf("%s_%d", spec.Name, i)
		}
		ig := &pb.ModelInstanceGroup{Name: name, Kind: kind, Count: int32(g.Count)}
		for _, id := range g.GPUs {
			ig.Gpus = append(ig.Gpus, int32(id))
		}
		c.InstanceGroup = append(c.InstanceGroup, ig)
	}
	c.ModelTransactionPolicy = &pb.ModelTransactionPolicy{Decoupled: spec.Decoupled}
	if spec.isEnsemble() {
		// Triton reports an ensemble's config without instance groups
		// (NormalizeInstanceGroup leaves ensembles alone) and without a
		// response_cache section.
		c.InstanceGroup = nil
		return c
	}
	c.ResponseCache = &pb.ModelResponseCache{Enable: false}
	return c
}

// load creates the model's versions and starts their schedulers; the
// caller holds e.mu or owns e exclusively.
func (e *Engine) load(m *model) {
	e.loadWith(m, nil)
}

// loadWith is load whose versions keep the statistics of those given, by
// version number (an update in place).
func (e *Engine) loadWith(m *model, keep map[int64]*statistics) {
	if m.versions != nil {
		return
	}
	var uuids []string
	for _, p := range m.placements {
		if p.gpu >= 0 && !slices.Contains(uuids, e.gpus[p.gpu].uuid) {
			uuids = append(uuids, e.gpus[p.gpu].uuid)
		}
	}
	for _, v := range m.spec.Versions {
		start := time.Now()
		mv := &modelVersion{model: m, version: v, label: strconv.FormatInt(v, 10), stats: keep[v]}
		if mv.stats == nil {
			mv.stats = &statistics{}
			mv.stats.init(uuids)
		} else {
			mv.stats.addSeries(uuids)
		}
		mv.sched = newScheduler(e, mv)
		// A real load takes milliseconds at least; the floor also keeps
		// the gauge a plain decimal. Triton reports no load time for an
		// ensemble (its gauge stays 0).
		if keep[v] == nil && !m.ensemble {
			mv.stats.loadNanos = int64(max(time.Since(start), time.Millisecond))
		}
		e.scheds[mv.sched] = struct{}{}
		m.versions = append(m.versions, mv)
	}
	m.loaded = true
	m.loadFailed = ""
	e.allocate(m, 1)
}

// unload stops the model's versions; the caller holds e.mu. Their
// schedulers are closed after the lock is released.
func (e *Engine) unload(m *model) []*scheduler {
	var scheds []*scheduler
	for _, v := range m.versions {
		scheds = append(scheds, v.sched)
	}
	if m.versions != nil {
		e.allocate(m, -1)
	}
	m.versions = nil
	m.loadFailed = ""
	return scheds
}

// allocate adds (sign 1) or releases (sign −1) the model's device memory.
func (e *Engine) allocate(m *model, sign int64) {
	for _, p := range m.placements {
		if p.gpu >= 0 {
			e.gpus[p.gpu].memory.Add(sign * int64(m.spec.MemoryBytes) * int64(len(m.spec.Versions)))
		}
	}
}

// parseVersion parses a request's version string as Triton's
// GetModelVersionFromString does, with std::stol: leading space, a sign and
// the leading digits count, the rest is ignored. "" is -1, the latest.
func parseVersion(version string) (int64, error) {
	if version == "" {
		return -1, nil
	}
	v, ok := parseCInt(version, 64)
	if !ok {
		// std::stol throws invalid_argument or out_of_range, both "stol".
		return 0, &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(
			"failed to get model version from specified version string '%s' (details: stol), version should be an integral value > 0", textsafe.Bound(version))}
	}
	if v < 0 {
		return 0, &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(
			"invalid model version specified '%s' , version should be an integral value > 0", textsafe.Bound(version))}
	}
	return v, nil
}

// parseCInt parses s as C++'s std::stol and std::stoi do: leading white
// space, an optional sign and at least one digit; what follows the digits
// is ignored. It reports false where they would throw (no digits, or a
// value that does not fit in bits).
func parseCInt(s string, bits int) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		return 0, false
	}
	v, err := strconv.ParseInt(s[:end], 10, bits)
	return v, err == nil
}

func unknownModel(name string) error {
	return &kserve.Error{Code: codes.NotFound, Message: fmt.Sprintf("Request for unknown model: '%s' is not found", textsafe.Bound(name))}
}

// readyVersion finds the version a request addresses, with Triton's errors
// for unknown models and versions that are not ready.
func (e *Engine) readyVersion(name, version string) (*modelVersion, error) {
	e.mu.RLock()
	m, ok := e.models[name]
	if !ok {
		e.mu.RUnlock()
		return nil, unknownModel(name)
	}
	versions := m.versions
	loaded := m.loaded
	closed := e.closed
	e.mu.RUnlock()
	v, err := parseVersion(version)
	if err != nil {
		return nil, err
	}
	if closed {
		return nil, errStopping
	}
	// Triton's model lifecycle does not know a model it never loaded; its
	// errors all say "Request for unknown model: ".
	if !loaded {
		return nil, unknownModel(name)
	}
	ready := !e.starting()
	if v < 0 {
		if !ready || len(versions) == 0 {
			return nil, &kserve.Error{Code: codes.NotFound, Message: fmt.Sprintf("Request for unknown model: '%s' has no available versions", name)}
		}
		return versions[len(versions)-1], nil
	}
	if !slices.Contains(m.spec.Versions, v) {
		return nil, &kserve.Error{Code: codes.NotFound,
			Message: fmt.Sprintf("Request for unknown model: '%s' version %d is not found", name, v)}
	}
	for _, mv := range versions {
		if mv.version == v && ready {
			return mv, nil
		}
	}
	return nil, &kserve.Error{Code: codes.Unavailable, Message: fmt.Sprintf("Request for unknown model: '%s' version %d is not at ready state", name, v)}
}

// ModelReady reports whether a model version (or, for "", any version) is
// ready. As on Triton 2.73, a model or version the server does not have
// (unknown, unloaded, a version not in its policy) is NOT_FOUND; one being
// loaded is not ready.
func (e *Engine) ModelReady(name, version string) (bool, error) {
	_, err := e.readyVersion(name, version)
	switch kserve.ErrorCode(err) {
	case codes.OK:
		return true, nil
	case codes.Unavailable:
		return false, nil
	case codes.NotFound:
		e.mu.RLock()
		_, known := e.models[name]
		starting := e.starting()
		e.mu.RUnlock()
		if known && starting {
			return false, nil // still loading at start
		}
	}
	return false, err
}

// ModelMetadata returns a ready model's metadata: its versions, platform
// (or backend) and tensors, with -1 prepended to shapes of batching models.
func (e *Engine) ModelMetadata(name, version string) (*pb.ModelMetadataResponse, error) {
	mv, err := e.readyVersion(name, version)
	if err != nil {
		return nil, err
	}
	m := mv.model
	resp := &pb.ModelMetadataResponse{Name: m.name, Platform: m.spec.Platform}
	if resp.Platform == "" {
		resp.Platform = m.spec.Backend
	}
	if version != "" {
		resp.Versions = []string{mv.label}
	} else {
		e.mu.RLock()
		for _, v := range m.versions {
			resp.Versions = append(resp.Versions, v.label)
		}
		e.mu.RUnlock()
	}
	shape := func(dims []int64) []int64 {
		if m.spec.MaxBatchSize > 0 {
			return append([]int64{-1}, dims...)
		}
		return slices.Clone(dims)
	}
	for _, t := range m.inputs {
		resp.Inputs = append(resp.Inputs, &pb.ModelMetadataResponse_TensorMetadata{Name: t.name, Datatype: t.datatype, Shape: shape(t.dims)})
	}
	for _, t := range m.outputs {
		resp.Outputs = append(resp.Outputs, &pb.ModelMetadataResponse_TensorMetadata{Name: t.name, Datatype: t.datatype, Shape: shape(t.dims)})
	}
	return resp, nil
}

// ModelConfig returns a copy of a ready model's configuration.
func (e *Engine) ModelConfig(name, version string) (*pb.ModelConfig, error) {
	mv, err := e.readyVersion(name, version)
	if err != nil {
		return nil, err
	}
	return proto.Clone(mv.model.config).(*pb.ModelConfig), nil
}
