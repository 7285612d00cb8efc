package kserve

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/triton/pb"
)

func TestDataTypeString(t *testing.T) {
	cases := map[pb.DataType]string{
		pb.DataType_TYPE_STRING: "BYTES",
		pb.DataType_TYPE_FP32:   "FP32",
		pb.DataType_TYPE_BF16:   "BF16",
		pb.DataType_TYPE_BOOL:   "BOOL",
	}
	for dt, want := range cases {
		if got := DataTypeString(dt); got != want {
			t.Errorf("DataTypeString(%v) = %q, want %q", dt, got, want)
		}
		back, ok := ParseDataType(want)
		if !ok || back != dt {
			t.Errorf("ParseDataType(%q) = %v, %v; want %v", want, back, ok, dt)
		}
	}
	if _, ok := ParseDataType("FLOAT"); ok {
		t.Error("ParseDataType accepted FLOAT")
	}
	if dt, ok := ParseDataType("TYPE_INT64"); !ok || dt != pb.DataType_TYPE_INT64 {
		t.Errorf("ParseDataType(TYPE_INT64) = %v, %v", dt, ok)
	}
}

func TestBytesFraming(t *testing.T) {
	elems := [][]byte{[]byte("ab"), {}, []byte("xyz")}
	raw := EncodeBytes(elems)
	if len(raw) != 3*4+5 {
		t.Fatalf("encoded length %d", len(raw))
	}
	got, err := DecodeBytes(raw, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range elems {
		if !bytes.Equal(got[i], elems[i]) {
			t.Errorf("element %d = %q, want %q", i, got[i], elems[i])
		}
	}
	if _, err := DecodeBytes(raw, 2); err == nil || !strings.Contains(err.Error(), "expected 2 string elements") {
		t.Errorf("wrong count error = %v", err)
	}
	if _, err := DecodeBytes(raw[:2], 1); err == nil || !strings.Contains(err.Error(), "incomplete string length indicator") {
		t.Errorf("truncated length error = %v", err)
	}
}

func TestElementCount(t *testing.T) {
	if ElementCount([]int64{2, 3, 4}) != 24 || ElementCount(nil) != 1 || ElementCount([]int64{-1, 3}) != 0 {
		t.Error("ElementCount wrong")
	}
}

func TestConfigJSONLikeTriton(t *testing.T) {
	cfg := &pb.ModelConfig{
		Name:         "resnet50",
		MaxBatchSize: 32,
		Input:        []*pb.ModelInput{{Name: "input", DataType: pb.DataType_TYPE_FP32, Dims: []int64{3, 224, 224}}},
		SchedulingChoice: &pb.ModelConfig_DynamicBatching{DynamicBatching: &pb.ModelDynamicBatching{
			PreferredBatchSize: []int32{8, 16}, MaxQueueDelayMicroseconds: 100,
		}},
		InstanceGroup: []*pb.ModelInstanceGroup{{Count: 2, Kind: pb.ModelInstanceGroup_KIND_GPU}},
	}
	raw, err := ConfigJSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	in := tree["input"].([]any)[0].(map[string]any)
	if dims, ok := in["dims"].([]any); !ok || dims[0] != float64(3) {
		t.Errorf("dims not numbers: %#v", in["dims"])
	}
	if in["data_type"] != "TYPE_FP32" {
		t.Errorf("data_type = %v", in["data_type"])
	}
	db := tree["dynamic_batching"].(map[string]any)
	if db["max_queue_delay_microseconds"] != float64(100) {
		t.Errorf("max_queue_delay_microseconds = %#v", db["max_queue_delay_microseconds"])
	}
	if _, ok := tree["default_model_filename"]; !ok {
		t.Error("unpopulated fields not printed")
	}
	if tree["instance_group"].([]any)[0].(map[string]any)["kind"] != "KIND_GPU" {
		t.Error("enum not printed by name")
	}
	back, err := ParseConfigJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if back.GetDynamicBatching().GetMaxQueueDelayMicroseconds() != 100 || back.Input[0].Dims[2] != 224 {
		t.Errorf("round trip lost values: %v", back)
	}
}

// TestElementSize: a fixed-size datatype's bytes per element, -1 for
// BYTES and 0 for a name the protocol does not have.
func TestElementSize(t *testing.T) {
	for dt, want := range map[string]int{
		"BOOL": 1, "UINT8": 1, "INT8": 1, "UINT16": 2, "INT16": 2, "FP16": 2, "BF16": 2,
		"UINT32": 4, "INT32": 4, "FP32": 4, "UINT64": 8, "INT64": 8, "FP64": 8, "BYTES": -1, "FLOAT": 0, "": 0,
	} {
		if got := ElementSize(dt); got != want {
			t.Errorf("ElementSize(%q) = %d, want %d", dt, got, want)
		}
	}
}

// TestFormatDims prints shapes as Triton's messages do.
func TestFormatDims(t *testing.T) {
	for _, c := range []struct {
		dims []int64
		want string
	}{{nil, "[]"}, {[]int64{16}, "[16]"}, {[]int64{-1, 3, 224, 224}, "[-1,3,224,224]"}} {
		if got := FormatDims(c.dims); got != c.want {
			t.Errorf("FormatDims(%v) = %q, want %q", c.dims, got, c.want)
		}
	}
}

// TestParseConfigJSONRefusesBadJSON: a config that is not JSON, or whose
// field has the wrong type, is an error saying so; a field this package
// does not know (a newer server's) is ignored.
func TestParseConfigJSONRefusesBadJSON(t *testing.T) {
	for _, doc := range []string{`{`, `{"max_batch_size": "many"}`} {
		if _, err := ParseConfigJSON([]byte(doc)); err == nil || !strings.Contains(err.Error(), "decode model config JSON") {
			t.Errorf("ParseConfigJSON(%s): %v", doc, err)
		}
	}
	cfg, err := ParseConfigJSON([]byte(`{"name": "m", "max_batch_size": "8", "a_newer_field": 1}`))
	if err != nil || cfg.GetName() != "m" || cfg.GetMaxBatchSize() != 8 {
		t.Errorf("ParseConfigJSON: %v, %v", cfg, err)
	}
}
