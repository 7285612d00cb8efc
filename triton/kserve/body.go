package kserve

import "encoding/json"

// HeaderContentLength is the binary tensor data extension's header giving
// the length of the JSON part of an infer body; the tensor bytes follow it.
const HeaderContentLength = "Inference-Header-Content-Length"

// The JSON bodies below are named after the KServe v2 REST specification
// ($inference_request, $request_input, ...). Their tags say what goes on
// the wire: a field marked omitempty may be absent.

// InferRequest is the JSON part of an infer request body
// (POST /v2/models/{m}[/versions/{v}]/infer).
type InferRequest struct {
	ID         string          `json:"id,omitempty"`
	Parameters map[string]any  `json:"parameters,omitempty"`
	Inputs     []RequestInput  `json:"inputs"`
	Outputs    []RequestOutput `json:"outputs,omitempty"`
}

// RequestInput is one input tensor of an InferRequest. Its data is either
// Data, a JSON array (flat or nested, row-major), or, with the binary tensor
// data extension, the "binary_data_size" parameter's count of bytes after
// the JSON part.
type RequestInput struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	Datatype   string          `json:"datatype"`
	Parameters map[string]any  `json:"parameters,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// RequestOutput names an output the request asks for; its "binary_data"
// parameter asks for the output as binary tensor data.
type RequestOutput struct {
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// InferResponse is the JSON part of an infer response body.
type InferResponse struct {
	ID           string           `json:"id,omitempty"`
	ModelName    string           `json:"model_name"`
	ModelVersion string           `json:"model_version"`
	Parameters   map[string]any   `json:"parameters,omitempty"`
	Outputs      []ResponseOutput `json:"outputs"`
}

// ResponseOutput is one output tensor of an InferResponse, with its data in
// Data or, when its "binary_data_size" parameter is set, that many bytes
// after the JSON part (outputs in order).
type ResponseOutput struct {
	Name       string          `json:"name"`
	Datatype   string          `json:"datatype"`
	Shape      []int64         `json:"shape"`
	Parameters map[string]any  `json:"parameters,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// ModelIndex is one entry of the repository index body
// (POST /v2/repository/index answers a JSON array of them).
type ModelIndex struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	State   string `json:"state,omitempty"` // empty for a model never loaded: its name alone
	Reason  string `json:"reason,omitempty"`
}
