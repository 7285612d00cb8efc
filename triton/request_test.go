package triton

import (
	"encoding/base64"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// simpleModel is Triton's "simple" example: two INT32 [16] inputs, batching
// up to 8. Metadata shapes carry the leading -1 Triton adds.
func simpleModel() (*pb.ModelMetadataResponse, *pb.ModelConfig) {
	md := &pb.ModelMetadataResponse{
		Name: "simple",
		Inputs: []*pb.ModelMetadataResponse_TensorMetadata{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{-1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{-1, 16}},
		},
	}
	cfg := &pb.ModelConfig{
		Name:         "simple",
		MaxBatchSize: 8,
		Input: []*pb.ModelInput{
			{Name: "INPUT0", DataType: pb.DataType_TYPE_INT32, Dims: []int64{16}},
			{Name: "INPUT1", DataType: pb.DataType_TYPE_INT32, Dims: []int64{16}},
		},
	}
	return md, cfg
}

// textModel has a variable-length INT64 input and a BYTES input, without
// batching, so metadata shapes equal config dims.
func textModel() (*pb.ModelMetadataResponse, *pb.ModelConfig) {
	md := &pb.ModelMetadataResponse{
		Name: "text",
		Inputs: []*pb.ModelMetadataResponse_TensorMetadata{
			{Name: "IDS", Datatype: "INT64", Shape: []int64{1, -1}},
			{Name: "TEXT", Datatype: "BYTES", Shape: []int64{2}},
			{Name: "HALF", Datatype: "FP16", Shape: []int64{4}},
		},
	}
	return md, &pb.ModelConfig{Name: "text"}
}

func TestBuildRequestsRandomBatched(t *testing.T) {
	md, cfg := simpleModel()
	reqs, err := BuildRequests(md, cfg, InputOptions{BatchSize: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "simple" || len(r.Inputs) != 2 {
		t.Fatalf("request %+v", r)
	}
	for _, in := range r.Inputs {
		if !reflect.DeepEqual(in.Shape, []int64{4, 16}) || in.Datatype != "INT32" {
			t.Errorf("%s: shape %v datatype %s, want [4 16] INT32", in.Name, in.Shape, in.Datatype)
		}
		if len(in.Data) != 4*16*4 {
			t.Errorf("%s: %d bytes, want %d", in.Name, len(in.Data), 4*16*4)
		}
		// Every batch item repeats the first one.
		item := in.Data[:64]
		for b := 1; b < 4; b++ {
			if string(in.Data[b*64:(b+1)*64]) != string(item) {
				t.Errorf("%s: batch item %d differs from item 0", in.Name, b)
			}
		}
	}
	if string(r.Inputs[0].Data) == string(make([]byte, len(r.Inputs[0].Data))) {
		t.Error("random data is all zero")
	}
}

func TestBuildRequestsZero(t *testing.T) {
	md, cfg := simpleModel()
	reqs, err := BuildRequests(md, cfg, InputOptions{Data: InputDataZero})
	if err != nil {
		t.Fatal(err)
	}
	in := reqs[0].Inputs[0]
	if !reflect.DeepEqual(in.Shape, []int64{1, 16}) {
		t.Errorf("shape %v, want [1 16]", in.Shape)
	}
	if string(in.Data) != string(make([]byte, 64)) {
		t.Error("zero data is not zero")
	}
}

func TestBuildRequestsVariableDims(t *testing.T) {
	md, cfg := textModel()
	_, err := BuildRequests(md, cfg, InputOptions{})
	if err == nil || !strings.Contains(err.Error(), "input 'IDS' of model 'text' has variable dims [1,-1]: give its shape with --shape IDS:1,N") {
		t.Fatalf("err = %v", err)
	}
	reqs, err := BuildRequests(md, cfg, InputOptions{Shapes: map[string][]int64{"IDS": {1, 7}}, StringLength: 5})
	if err != nil {
		t.Fatal(err)
	}
	ids, text, half := reqs[0].Inputs[0], reqs[0].Inputs[1], reqs[0].Inputs[2]
	if !reflect.DeepEqual(ids.Shape, []int64{1, 7}) || len(ids.Data) != 7*8 {
		t.Errorf("IDS shape %v, %d bytes", ids.Shape, len(ids.Data))
	}
	elems, err := kserve.DecodeBytes(text.Data, 2)
	if err != nil {
		t.Fatalf("BYTES framing: %v", err)
	}
	for _, e := range elems {
		if len(e) != 5 {
			t.Errorf("string element %q, want length 5", e)
		}
	}
	if len(half.Data) != 8 {
		t.Errorf("FP16 data %d bytes, want 8", len(half.Data))
	}
	for i := 0; i < 4; i++ {
		if v := binary.LittleEndian.Uint16(half.Data[2*i:]); v&0x7c00 == 0x7c00 {
			t.Errorf("FP16 element %d is Inf or NaN: %#04x", i, v)
		}
	}
}

func TestBuildRequestsErrors(t *testing.T) {
	md, cfg := simpleModel()
	tmd, tcfg := textModel()
	tests := []struct {
		name string
		md   *pb.ModelMetadataResponse
		cfg  *pb.ModelConfig
		opts InputOptions
		want string
	}{
		{"batch too large", md, cfg, InputOptions{BatchSize: 16},
			"batch size 16 is larger than max_batch_size 8 of model 'simple'"},
		{"batch on non-batching model", tmd, tcfg, InputOptions{BatchSize: 2, Shapes: map[string][]int64{"IDS": {1, 3}}},
			"batch size 2 is larger than max_batch_size 0 of model 'text'"},
		{"wrong rank", md, cfg, InputOptions{Shapes: map[string][]int64{"INPUT0": {4, 4}}},
			"--shape [4,4] for input 'INPUT0' does not fit model 'simple': expected dims [16]"},
		{"wrong fixed dim", tmd, tcfg, InputOptions{Shapes: map[string][]int64{"IDS": {2, 3}}},
			"--shape [2,3] for input 'IDS' does not fit model 'text': expected dims [1,-1]"},
		{"unknown input", md, cfg, InputOptions{Shapes: map[string][]int64{"NOPE": {1}}},
			"--shape names input 'NOPE', which model 'simple' does not have (inputs: INPUT0, INPUT1)"},
		{"missing file", md, cfg, InputOptions{Data: "/nonexistent/data.json"},
			"input data: open /nonexistent/data.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildRequests(tt.md, tt.cfg, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func writeJSON(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func seq(from, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(from + i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestBuildRequestsFromInputData(t *testing.T) {
	md, cfg := simpleModel()
	// Set 1: plain arrays; set 2: nested content with shape, and b64 raw
	// bytes for INPUT1.
	raw := PutInt32s([]int32{100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115})
	path := writeJSON(t, `{"data": [
	  {"INPUT0": `+seq(0, 16)+`, "INPUT1": `+seq(16, 16)+`},
	  {"INPUT0": {"content": [`+seq(-8, 8)+`,`+seq(0, 8)+`], "shape": [16]},
	   "INPUT1": {"b64": "`+b64(raw)+`"}}
	]}`)
	reqs, err := BuildRequests(md, cfg, InputOptions{Data: path, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("got %d requests, want one per data set (2)", len(reqs))
	}
	got := Int32s(reqs[0].Inputs[0].Data)
	if len(got) != 32 || got[0] != 0 || got[15] != 15 || got[16] != 0 || got[31] != 15 {
		t.Errorf("set 1 INPUT0 = %v", got)
	}
	got = Int32s(reqs[1].Inputs[0].Data)
	if got[0] != -8 || got[8] != 0 || got[15] != 7 {
		t.Errorf("set 2 INPUT0 = %v", got)
	}
	if got := Int32s(reqs[1].Inputs[1].Data); got[0] != 100 || got[15] != 115 || got[16] != 100 {
		t.Errorf("set 2 INPUT1 (b64) = %v", got)
	}
}

func TestInputDataErrors(t *testing.T) {
	md, cfg := simpleModel()
	tests := []struct {
		name, json, want string
	}{
		{"wrong count", `{"data":[{"INPUT0":` + seq(0, 16) + `,"INPUT1":` + seq(0, 16) + `},{"INPUT0":` + seq(0, 15) + `,"INPUT1":` + seq(0, 16) + `}]}`,
			"input 'INPUT0' in data set 2 has 15 elements, expected 16"},
		{"missing input", `{"data":[{"INPUT0":` + seq(0, 16) + `}]}`,
			"input 'INPUT1' is missing from data set 1 of"},
		{"not a number", `{"data":[{"INPUT0":["x"],"INPUT1":[1]}]}`,
			"input 'INPUT0' in data set 1 has 1 elements, expected 16"},
		{"out of range", `{"data":[{"INPUT0":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,99999999999],"INPUT1":` + seq(0, 16) + `}]}`,
			"input 'INPUT0' in data set 1: element 15: 99999999999 is not an INT32"},
		{"bad b64 size", `{"data":[{"INPUT0":{"b64":"AAAA"},"INPUT1":` + seq(0, 16) + `}]}`,
			"b64 content has 3 bytes, expected 64"},
		{"no data key", `{"dat":[]}`, `no "data" array`},
		{"empty", `{"data":[]}`, `"data" is empty`},
		{"sequence data", `{"data":[[{"INPUT0":[1]}]]}`, "sequence (multi-stream) data is not supported"},
		{"bad shape", `{"data":[{"INPUT0":{"content":` + seq(0, 16) + `,"shape":[4,4]},"INPUT1":` + seq(0, 16) + `}]}`,
			`the input data's "shape" [4,4] for input 'INPUT0' does not fit model 'simple': expected dims [16]`},
		{"not json", `{"data": [`, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildRequests(md, cfg, InputOptions{Data: writeJSON(t, tt.json)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestInputDataTypes(t *testing.T) {
	md := &pb.ModelMetadataResponse{
		Name: "types",
		Inputs: []*pb.ModelMetadataResponse_TensorMetadata{
			{Name: "B", Datatype: "BOOL", Shape: []int64{3}},
			{Name: "S", Datatype: "BYTES", Shape: []int64{2}},
			{Name: "F", Datatype: "FP32", Shape: []int64{1}},
			{Name: "H", Datatype: "FP16", Shape: []int64{2}},
			{Name: "U", Datatype: "UINT16", Shape: []int64{1}},
			{Name: "X", Datatype: "BYTES", Shape: []int64{1}},
		},
	}
	path := writeJSON(t, `{"data":[{"B":[true,false,1],"S":["ab","cde"],"F":[1.5],"H":[1.0,-2.0],"U":[65535],"X":{"b64":"aGk="}}]}`)
	reqs, err := BuildRequests(md, &pb.ModelConfig{Name: "types"}, InputOptions{Data: path})
	if err != nil {
		t.Fatal(err)
	}
	in := reqs[0].Inputs
	if string(in[0].Data) != "\x01\x00\x01" {
		t.Errorf("BOOL = %q", in[0].Data)
	}
	if s, err := kserve.DecodeBytes(in[1].Data, 2); err != nil || string(s[0]) != "ab" || string(s[1]) != "cde" {
		t.Errorf("BYTES = %q (%v)", s, err)
	}
	if f := Float32s(in[2].Data); f[0] != 1.5 {
		t.Errorf("FP32 = %v", f)
	}
	// IEEE half: 1.0 = 0x3c00, -2.0 = 0xc000.
	if h0, h1 := binary.LittleEndian.Uint16(in[3].Data), binary.LittleEndian.Uint16(in[3].Data[2:]); h0 != 0x3c00 || h1 != 0xc000 {
		t.Errorf("FP16 = %#04x %#04x, want 0x3c00 0xc000", h0, h1)
	}
	if binary.LittleEndian.Uint16(in[4].Data) != 65535 {
		t.Errorf("UINT16 = %v", in[4].Data)
	}
	if s, err := kserve.DecodeBytes(in[5].Data, 1); err != nil || string(s[0]) != "hi" {
		t.Errorf("BYTES b64 = %q (%v)", s, err)
	}
}

func TestParseShapes(t *testing.T) {
	got, err := ParseShapes([]string{"INPUT0:1,16", "ns:name:3"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{"INPUT0": {1, 16}, "ns:name": {3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"INPUT0", "INPUT0:", ":1,2", "INPUT0:1,x", "INPUT0:-1", "A:1"} {
		flags := []string{bad}
		if bad == "A:1" {
			flags = []string{"A:1", "A:2"}
		}
		if _, err := ParseShapes(flags); err == nil || !strings.HasPrefix(err.Error(), "bad --shape") {
			t.Errorf("ParseShapes(%q) err = %v, want a bad --shape error", flags, err)
		}
	}
}

// TestBuildRequestsHugeShapes: shapes whose data could never be sent, or
// whose element count overflows an int64, get an error naming the input
// before anything is allocated (the overflow used to panic in make).
func TestBuildRequestsHugeShapes(t *testing.T) {
	md := &pb.ModelMetadataResponse{Name: "m", Inputs: []*pb.ModelMetadataResponse_TensorMetadata{
		{Name: "X", Datatype: "FP32", Shape: []int64{-1, -1, -1}},
	}}
	cfg := &pb.ModelConfig{Name: "m", MaxBatchSize: 8}
	for _, tc := range []struct {
		shape []int64
		batch int
		max   int64
		ok    bool
	}{
		{[]int64{3037000500, 3037000500}, 1, 0, false}, // elements overflow int64: was a negative make
		{[]int64{1 << 31, 1 << 31}, 1, 0, false},       // bytes overflow int64
		{[]int64{99999999999, 1}, 1, 0, false},         // the input_ids:99999999999
		{[]int64{1 << 29, 1}, 1, 0, false},             // 2 GiB: over what Triton receives
		{[]int64{1024, 1}, 1, 4096, true},              // exactly MaxBytes
		{[]int64{1024, 1}, 2, 4096, false},             // the batch counts
	} {
		_, err := BuildRequests(md, cfg, InputOptions{Shapes: map[string][]int64{"X": tc.shape}, BatchSize: tc.batch, MaxBytes: tc.max, Data: InputDataZero})
		if tc.ok {
			if err != nil {
				t.Errorf("shape %v batch %d max %d: %v", tc.shape, tc.batch, tc.max, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "input 'X' of model 'm' with shape") || !strings.Contains(err.Error(), "smaller --shape or -b") {
			t.Errorf("shape %v batch %d: err %v", tc.shape, tc.batch, err)
		}
	}
}
