package kserve

import (
	"encoding/json"
	"testing"
)

// TestInferRequestOmitsWhatIsAbsent pins the request body's optional
// fields: a binary input has no "data", and an empty id, parameters and
// outputs are left out rather than sent empty.
func TestInferRequestOmitsWhatIsAbsent(t *testing.T) {
	req := InferRequest{Inputs: []RequestInput{
		{Name: "IN", Shape: []int64{2}, Datatype: "INT32", Parameters: map[string]any{"binary_data_size": 8}},
		{Name: "TXT", Shape: []int64{1}, Datatype: "BYTES", Data: json.RawMessage(`["a"]`)},
	}}
	got, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"inputs":[{"name":"IN","shape":[2],"datatype":"INT32","parameters":{"binary_data_size":8}},` +
		`{"name":"TXT","shape":[1],"datatype":"BYTES","data":["a"]}]}`
	if string(got) != want {
		t.Errorf("body = %s\nwant   %s", got, want)
	}
}

// TestInferResponseReadsTritonBody decodes a response as Triton writes it:
// one output as JSON data, one as binary data counted by binary_data_size.
func TestInferResponseReadsTritonBody(t *testing.T) {
	body := `{"id":"r1","model_name":"m","model_version":"1","outputs":[` +
		`{"name":"A","datatype":"FP32","shape":[1,2],"data":[1.5,2]},` +
		`{"name":"B","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":4}}]}`
	var resp InferResponse
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.ID != "r1" || resp.ModelName != "m" || resp.ModelVersion != "1" || len(resp.Outputs) != 2 {
		t.Fatalf("decoded %+v", resp)
	}
	if a := resp.Outputs[0]; string(a.Data) != "[1.5,2]" || a.Shape[1] != 2 {
		t.Errorf("output A = %+v", a)
	}
	if b := resp.Outputs[1]; b.Data != nil || b.Parameters["binary_data_size"] != float64(4) {
		t.Errorf("output B = %+v", b)
	}
}
