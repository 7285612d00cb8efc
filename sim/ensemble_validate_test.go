package sim

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
)

// ensJoin is the real server's identity model of two inputs and two
// outputs that the cycle case needs.
func ensJoin() ModelSpec {
	m := ensIdentity("join", 0)
	m.Inputs = append(m.Inputs, TensorSpec{Name: "INPUT1", DataType: "TYPE_FP32", Dims: []int64{16}})
	m.Outputs = append(m.Outputs, TensorSpec{Name: "OUTPUT1", DataType: "TYPE_FP32", Dims: []int64{16}})
	m.DynamicBatching = nil
	return m
}

// ensBad is the pipeline renamed and changed by change.
func ensBad(name string, change func(*ModelSpec)) ModelSpec {
	m := ensPipeline()
	m.Name = name
	es := *m.EnsembleScheduling
	es.Steps = append([]EnsembleStepSpec(nil), es.Steps...)
	m.EnsembleScheduling = &es
	change(&m)
	return m
}

// ensBadConfigs are ensembles Triton refuses, each with the message the
// real server (2.73) gave when asked to load a copy of its repository with
// that config (--model-control-mode=explicit, POST
// v2/repository/models/NAME/load; the config errors' messages from its
// log). poll tells the errors found reading the config, which the load
// answers as "failed to poll from model repository".
var ensBadConfigs = []struct {
	spec ModelSpec
	also []ModelSpec
	msg  string
	poll bool
}{
	{spec: ensBad("e_missing_model", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps[0] = ensStep("nosuch", "INPUT0", "IN", "OUTPUT0", "features")
	}), msg: "ensemble e_missing_model contains models that are not available or ambiguous: nosuch"},
	{spec: ensBad("e_unproduced", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps[1] = ensStep("classifier", "INPUT0", "featurez", "OUTPUT0", "OUT")
	}), poll: true, msg: "output 'OUT' for ensemble 'e_unproduced' is not written: at least one of its depending tensors, 'featurez', is not connected"},
	{spec: ensBad("e_bad_input", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps[0] = ensStep("preprocess", "INPUTX", "IN", "OUTPUT0", "features")
	}), msg: "in ensemble e_bad_input, ensemble tensor IN is mapping to non-existing input INPUTX in model preprocess"},
	{spec: ensBad("e_bad_output_name", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps[0] = ensStep("preprocess", "INPUT0", "IN", "OUTPUTX", "features")
	}), msg: "in ensemble e_bad_output_name, ensemble tensor features is mapped from non-existing output OUTPUTX in model preprocess"},
	{spec: ensBad("e_output_unproduced", func(m *ModelSpec) {
		m.Outputs = append(m.Outputs, TensorSpec{Name: "OUT2", DataType: "TYPE_FP32", Dims: []int64{16}})
	}), poll: true, msg: "ensemble output 'OUT2' for ensemble e_output_unproduced' is not used"},
	{spec: ensBad("e_dtype", func(m *ModelSpec) { m.Inputs[0].DataType = "TYPE_FP16" }),
		msg: "in ensemble e_dtype, ensemble tensor IN: inconsistent data type: TYPE_FP16 is inferred from model e_dtype while TYPE_FP32 is inferred from model preprocess"},
	{spec: ensBad("e_dims", func(m *ModelSpec) { m.Outputs[0].Dims = []int64{8} }),
		msg: "in ensemble e_dims, ensemble tensor OUT: inconsistent shape: [-1,8] is inferred from model e_dims while [-1,16] is inferred from model classifier"},
	{spec: ensBad("e_cycle", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps = []EnsembleStepSpec{
			{ModelName: "join", ModelVersion: -1, InputMap: map[string]string{"INPUT0": "IN", "INPUT1": "b"},
				OutputMap: map[string]string{"OUTPUT0": "a", "OUTPUT1": "OUT"}},
			ensStep("classifier", "INPUT0", "a", "OUTPUT0", "b"),
		}
	}), poll: true, msg: "output 'OUT' for ensemble 'e_cycle' is not written: at least one of its depending tensors, 'a', is not connected"},
	{spec: ensBad("e_unused_in", func(m *ModelSpec) {
		m.Inputs = append(m.Inputs, TensorSpec{Name: "IN2", DataType: "TYPE_FP32", Dims: []int64{16}})
	}), poll: true, msg: "ensemble input 'IN2' for ensemble e_unused_in' is not used"},
	{spec: ensBad("e_batch", func(m *ModelSpec) { m.MaxBatchSize = 16 }),
		msg: "ensemble e_batch allows maximum batch size 16, but it contains model preprocess which only allows maximum batch size to be 8"},
	{spec: ensBad("e_unmapped_input", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps[1] = ensStep("join", "INPUT0", "features", "OUTPUT0", "OUT")
	}), msg: "in ensemble e_unmapped_input, input INPUT1 in model join is not mapped to any ensemble tensors"},
	{spec: ensBad("e_extra_tensor", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps[0] = EnsembleStepSpec{ModelName: "join", ModelVersion: -1,
			InputMap:  map[string]string{"INPUT0": "IN", "INPUT1": "IN"},
			OutputMap: map[string]string{"OUTPUT0": "features", "OUTPUT1": "spare"}}
	}), poll: true, msg: "ensemble tensor 'spare' is unused in ensemble 'e_extra_tensor'"},
	{spec: ensBad("e_dup_output", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps[1] = ensStep("classifier", "INPUT0", "features", "OUTPUT0", "features")
	}), poll: true, msg: "ensemble tensor 'features' can appear in an output map only once for ensemble 'e_dup_output' step 1"},
	{spec: ensBad("e_version", func(m *ModelSpec) { m.EnsembleScheduling.Steps[0].ModelVersion = 3 }),
		msg: "ensemble 'e_version' depends on 'preprocess' whose required version 3 is not loaded."},
	// A step without model_version asks for version 0, which Triton
	// refuses as it does any version it has not loaded.
	{spec: ensBad("p0", func(m *ModelSpec) { m.EnsembleScheduling.Steps[0].ModelVersion = 0 }),
		msg: "ensemble 'p0' depends on 'preprocess' whose required version 0 is not loaded."},
	{spec: ensBad("e_instance", func(m *ModelSpec) {
		m.InstanceGroups = []InstanceGroupSpec{{Count: 1, Kind: "KIND_CPU"}}
	}), poll: true, msg: "instance group should not be specified for ensemble 'e_instance'"},
	{spec: ensBad("e_nosteps", func(m *ModelSpec) { m.EnsembleScheduling.Steps = nil }),
		poll: true, msg: "must specify 'step' for ensemble 'e_nosteps'"},
	{spec: ensBad("e_a", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps = []EnsembleStepSpec{ensStep("e_b", "IN", "IN", "OUT", "OUT")}
	}), also: []ModelSpec{ensBad("e_b", func(m *ModelSpec) {
		m.EnsembleScheduling.Steps = []EnsembleStepSpec{ensStep("e_a", "IN", "IN", "OUT", "OUT")}
	})}, msg: "circular dependency between ensembles: e_a -> ... -> e_b -> e_a"},
}

func TestEnsembleBadConfigFailsStartWithTritonsMessage(t *testing.T) {
	t.Parallel()
	for _, c := range ensBadConfigs {
		t.Run(c.spec.Name, func(t *testing.T) {
			t.Parallel()
			repo := Repository{Models: append([]ModelSpec{ensIdentity("preprocess", 0), ensIdentity("classifier", 0), ensJoin(), c.spec}, c.also...)}
			e, err := NewEngine(repo, EngineOptions{})
			if err == nil {
				e.Close()
				t.Fatal("NewEngine succeeded")
			}
			// Triton logs the message and fails to start: "failed to load
			// all models".
			if !strings.Contains(err.Error(), "failed to load all models: failed to load '"+c.spec.Name+"': "+c.msg) {
				t.Errorf("NewEngine: %v\nwant Triton's message %q", err, c.msg)
			}
		})
	}
}

func TestEnsembleBadConfigFailsExplicitLoadAsTritonDoes(t *testing.T) {
	t.Parallel()
	for _, c := range ensBadConfigs {
		t.Run(c.spec.Name, func(t *testing.T) {
			t.Parallel()
			repo := Repository{Models: append([]ModelSpec{ensIdentity("preprocess", 0), ensIdentity("classifier", 0), ensJoin(), c.spec}, c.also...)}
			e := engNew(t, repo, EngineOptions{ModelControl: ModelControlExplicit})
			err := e.LoadModel(c.spec.Name)
			code, msg := codes.InvalidArgument, "load failed for model '"+c.spec.Name+"': "+c.msg+"\n"
			if c.poll {
				code, msg = codes.Internal, "failed to load '"+c.spec.Name+"', failed to poll from model repository"
			}
			if kserve.ErrorCode(err) != code || errorMessage(err) != msg {
				t.Errorf("LoadModel: %v\nwant %v %q", err, code, msg)
			}
			// Triton then does not know the model.
			if ready, err := e.ModelReady(c.spec.Name, ""); ready || kserve.ErrorCode(err) != codes.NotFound {
				t.Errorf("ModelReady after the failed load = %t, %v, want NOT_FOUND", ready, err)
			}
		})
	}
}

func TestEnsembleDescriptionChecks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		change func(*ModelSpec)
		want   string
	}{
		{func(m *ModelSpec) { m.DynamicBatching = &DynamicBatchingSpec{} }, "ensemble_scheduling: a model has one scheduler; remove dynamic_batching"},
		{func(m *ModelSpec) { m.Decoupled = true }, "decoupled: the simulator's ensembles are not decoupled; remove it"},
		{func(m *ModelSpec) { m.EnsembleScheduling.Steps[0].OutputMap["OUTPUT0"] = "bad\x01name" }, `output_map["OUTPUT0"]: "bad\x01name" holds`},
	} {
		spec := ensBad("pipeline", c.change)
		err := Repository{Models: []ModelSpec{ensIdentity("preprocess", 0), ensIdentity("classifier", 0), spec}}.check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("check: %v, want %q", err, c.want)
		}
	}
}
