package tune

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// servedConfig is identity_int32's configuration as the real Triton
// serves it (GET v2/models/identity_int32/config), abridged.
const servedConfig = `{"name":"identity_int32","platform":"","backend":"identity","version_policy":{"latest":{"num_versions":1}},
"max_batch_size":64,"input":[{"name":"INPUT0","data_type":"TYPE_INT32","format":"FORMAT_NONE","dims":[-1]}],
"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}],
"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true}},
"dynamic_batching":{"preferred_batch_size":[64],"max_queue_delay_microseconds":100,"priority_levels":0,"default_priority_level":0,"priority_queue_policy":{}},
"instance_group":[{"name":"identity_int32_0","kind":"KIND_CPU","count":1,"gpus":[]}],"parameters":{}}`

func served(t *testing.T) *pb.ModelConfig {
	t.Helper()
	cfg, err := kserve.ParseConfigJSON([]byte(servedConfig))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestConfigureAppliesThePoint: a point's instances, batch size, delay
// and preferred sizes land in the configuration, everything else stays,
// and PointOf reads the point back.
func TestConfigureAppliesThePoint(t *testing.T) {
	t.Parallel()
	orig := served(t)
	if p := PointOf(orig); p != (Point{Instances: 1, MaxBatch: 64, Delay: 100, Preferred: PreferMax}) {
		t.Fatalf("PointOf(served) = %+v", p)
	}
	for _, p := range []Point{
		{Instances: 3, MaxBatch: 16, Delay: 500, Preferred: PreferHalf},
		{Instances: 2, MaxBatch: 8, Delay: 0, Preferred: PreferMax},
		{Instances: 4, MaxBatch: 1},
	} {
		c := Configure(orig, p)
		if got := PointOf(c); got != p.normal() {
			t.Errorf("PointOf(Configure(%+v)) = %+v", p, got)
		}
		if c.GetName() != "identity_int32" || c.GetBackend() != "identity" || c.GetInstanceGroup()[0].GetKind() != pb.ModelInstanceGroup_KIND_CPU ||
			!c.GetOptimization().GetInputPinnedMemory().GetEnable() {
			t.Errorf("Configure(%+v) lost the original's other fields: %v", p, c)
		}
		if !p.Batcher() && c.GetDynamicBatching() != nil {
			t.Errorf("Configure(%+v) kept a dynamic batcher", p)
		}
	}
	if !proto.Equal(orig, served(t)) {
		t.Error("Configure changed the original")
	}
	if sz := Configure(orig, Point{Instances: 1, MaxBatch: 16, Preferred: PreferHalf}).GetDynamicBatching().GetPreferredBatchSize(); !slices.Equal(sz, []int32{8, 16}) {
		t.Errorf("half of 16: preferred %v", sz)
	}
}

// TestOverrideAndPBTxtRoundTrip: the override is JSON with Triton's field
// names, and the config.pbtxt reads back as the same configuration in
// protobuf text format, its comment lines first.
func TestOverrideAndPBTxtRoundTrip(t *testing.T) {
	t.Parallel()
	c := Configure(served(t), Point{Instances: 2, MaxBatch: 32, Delay: 250, Preferred: PreferMax})
	js, err := OverrideJSON(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	if m["max_batch_size"] != float64(32) || m["dynamic_batching"].(map[string]any)["max_queue_delay_microseconds"] != "250" {
		t.Errorf("override JSON: %s", js)
	}
	back, err := kserve.ParseConfigJSON([]byte(js))
	if err != nil || !proto.Equal(back, c) {
		t.Errorf("the override does not parse back as the configuration: %v", err)
	}
	txt := PBTxt(c, "tuned by tritontop\nobjective: throughput")
	if !strings.HasPrefix(txt, "# tuned by tritontop\n# objective: throughput\n") || !strings.Contains(txt, "max_batch_size: 32") {
		t.Errorf("config.pbtxt:\n%s", txt)
	}
	var parsed pb.ModelConfig
	if err := prototext.Unmarshal([]byte(txt), &parsed); err != nil || !proto.Equal(&parsed, c) {
		t.Errorf("config.pbtxt does not parse back: %v\n%s", err, txt)
	}
	if again := PBTxt(c, "tuned by tritontop\nobjective: throughput"); again != txt {
		t.Error("the same configuration wrote another text")
	}
}

// TestPBTxtEscapesAndMaps: strings with quotes, backslashes, newlines
// and UTF-8, and map parameters, parse back to the same configuration.
func TestPBTxtEscapesAndMaps(t *testing.T) {
	t.Parallel()
	c := served(t)
	c.Parameters = map[string]*pb.ModelParameter{
		"zeta": {StringValue: "a \"quoted\" \\ path\nline"}, "alpha": {StringValue: "naïve ✓"},
	}
	c.Input[0].Dims = []int64{-1, 3}
	txt := PBTxt(c, "")
	var parsed pb.ModelConfig
	if err := prototext.Unmarshal([]byte(txt), &parsed); err != nil || !proto.Equal(&parsed, c) {
		t.Errorf("does not parse back: %v\n%s", err, txt)
	}
	if i, j := strings.Index(txt, `key: "alpha"`), strings.Index(txt, `key: "zeta"`); i < 0 || j < i {
		t.Errorf("map keys not sorted:\n%s", txt)
	}
}

// TestTunableRefusesWhatItCannotVary: ensembles, stateful and decoupled
// models are refused with a reason.
func TestTunableRefusesWhatItCannotVary(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]*pb.ModelConfig{
		"ensemble":  {Platform: "ensemble"},
		"sequence":  {SchedulingChoice: &pb.ModelConfig_SequenceBatching{SequenceBatching: &pb.ModelSequenceBatching{}}},
		"decoupled": {ModelTransactionPolicy: &pb.ModelTransactionPolicy{Decoupled: true}},
	} {
		if err := Tunable(c); err == nil || !strings.Contains(err.Error(), name[:4]) && name != "sequence" {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := Tunable(served(t)); err != nil {
		t.Errorf("identity_int32: %v", err)
	}
}

// TestSpaceParsingAndPoints: ranges of powers of two, lists, refusals in
// one line; the grid's points without repeats (no delay without a
// batcher); the nearest point on a log scale.
func TestSpaceParsingAndPoints(t *testing.T) {
	t.Parallel()
	if v, err := ParseInts("max-batch-sizes", "1:100", true, 1, 1<<20); err != nil || !slices.Equal(v, []int{1, 2, 4, 8, 16, 32, 64, 100}) {
		t.Errorf("1:100 powers: %v %v", v, err)
	}
	if v, err := ParseInts("instances", "2:4", false, 1, 64); err != nil || !slices.Equal(v, []int{2, 3, 4}) {
		t.Errorf("2:4: %v %v", v, err)
	}
	if v, err := ParseInts("queue-delays", "500, 0,100,100", false, 0, 1e7); err != nil || !slices.Equal(v, []int{0, 100, 500}) {
		t.Errorf("list: %v %v", v, err)
	}
	for _, bad := range []string{"0:4", "4:2", "x", "1,,2", "1:999"} {
		if _, err := ParseInts("instances", bad, false, 1, 64); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := ParsePreferred("max,third"); err == nil {
		t.Error("third accepted")
	}
	sp := Space{Instances: []int{1, 2}, MaxBatch: []int{1, 8}, Delays: []int{0, 100}, Preferred: []Preferred{PreferMax, PreferHalf}, Concurrency: []int{1, 4}}
	// batch 1: one configuration per instance count; batch 8: 2 delays × 2 preferred.
	if n := len(sp.Points()); n != 2*(1+4) || sp.Size() != 2*n {
		t.Errorf("%d points, size %d", n, sp.Size())
	}
	ix := sp.nearest(Point{Instances: 3, MaxBatch: 6, Delay: 70, Preferred: PreferHalf})
	if p := sp.at(ix); p != (Point{Instances: 2, MaxBatch: 8, Delay: 100, Preferred: PreferHalf}) {
		t.Errorf("nearest: %+v", p)
	}
}
