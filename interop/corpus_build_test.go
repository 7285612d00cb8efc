package interop_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"testing"

	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/triton/pb"
)

// The corpus's vocabulary: a case is one request, written on one line
// with the builders below and marked with its server's switches, its
// group (a stateful sequence of cases with a server pair of its own) and
// an explained difference when there is one.

// switches are the server switches a case needs.
type switches struct {
	explicit bool // --model-control-mode=explicit --load-model=*
	shm      bool // --allow-client-shm=true
}

// Switch sets.
var (
	explicit = switches{explicit: true}
	shmOn    = switches{shm: true}
)

// corpusCase is one request of the corpus.
type corpusCase struct {
	name  string
	sw    switches
	group string
	req   interop.Request
	known string // a key of explainedDiffs
	// settle, when set, is resent to the real server while its answer
	// holds this text (up to 10 s): a state Triton passes through in the
	// background, as UNLOADING after an unload it has answered.
	settle string
}

// serverKey names the server pair the case runs on.
func (c corpusCase) serverKey() string {
	k := "triton"
	if c.sw.explicit {
		k += "_explicit"
	}
	if c.sw.shm {
		k += "_allow_client_shm"
	}
	if c.group != "" {
		k += "_" + c.group
	}
	return k
}

// on runs the case on a server started with sw.
func (c corpusCase) on(sw switches) corpusCase { c.sw = sw; return c }

// in makes the case part of group: the group's cases share a server pair
// of their own and run in order.
func (c corpusCase) in(group string) corpusCase { c.group = group; return c }

// settled resends the case to the real server while its answer holds
// transient (docs/interop.md: Triton unloads in the background; the
// simulator has unloaded when it answers).
func (c corpusCase) settled(transient string) corpusCase { c.settle = transient; return c }

// explained marks the case with an explained difference.
func (c corpusCase) explained(key string) corpusCase { c.known = key; return c }

// corpusEnv is what cases name that differs between test processes.
type corpusEnv struct {
	shmPrefix string
}

// shmKey is the POSIX shared-memory key of a group.
func (e corpusEnv) shmKey(group string) string { return e.shmPrefix + group }

// hGet is an HTTP GET.
func hGet(name, path string) corpusCase {
	return corpusCase{name: name, req: interop.HTTPRequest{Method: "GET", Path: path}}
}

// hPost is an HTTP POST of a body (JSON, or anything).
func hPost(name, path, body string) corpusCase {
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	return corpusCase{name: name, req: interop.HTTPRequest{Method: "POST", Path: path, Body: b}}
}

// hMethod is an HTTP request with any method and no body.
func hMethod(name, m, path string) corpusCase {
	return corpusCase{name: name, req: interop.HTTPRequest{Method: m, Path: path}}
}

// hBinary is an HTTP POST with the binary-tensor extension: the JSON
// header, then the tensors' bytes, with Inference-Header-Content-Length
// set to headerLen (-1: the JSON header's length).
func hBinary(name, path, header string, headerLen int, tensors ...[]byte) corpusCase {
	b := []byte(header)
	for _, t := range tensors {
		b = append(b, t...)
	}
	if headerLen < 0 {
		headerLen = len(header)
	}
	return corpusCase{name: name, req: interop.HTTPRequest{Method: "POST", Path: path, Body: b,
		Header: map[string]string{"Inference-Header-Content-Length": strconv.Itoa(headerLen)}}}
}

// call is a unary gRPC call of Triton's inference service.
func call(name, rpc string, m proto.Message) corpusCase {
	return corpusCase{name: name, req: interop.GRPCCall{Method: interop.GRPCMethod(rpc), Message: m}}
}

// health is a call of gRPC's health service.
func health(name string) corpusCase {
	return corpusCase{name: name, req: interop.GRPCCall{Method: "/grpc.health.v1.Health/Check", Message: &grpc_health_v1.HealthCheckRequest{}}}
}

// stream is a ModelStreamInfer stream of requests.
func stream(name string, reqs ...*pb.ModelInferRequest) corpusCase {
	return corpusCase{name: name, req: interop.GRPCStream{Requests: reqs}}
}

// Tensor data.

func i32(v ...int32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

func u32(v ...uint32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func f32(v ...float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// strs is BYTES elements, each with its 4-byte length.
func strs(v ...string) []byte {
	var b []byte
	for _, s := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

// gRPC infer requests.

// tensor is a gRPC input: name, datatype, shape.
func tensor(name, dt string, shape ...int64) *pb.ModelInferRequest_InferInputTensor {
	return &pb.ModelInferRequest_InferInputTensor{Name: name, Datatype: dt, Shape: shape}
}

// withContents sets a gRPC input's typed contents.
func withContents(t *pb.ModelInferRequest_InferInputTensor, c *pb.InferTensorContents) *pb.ModelInferRequest_InferInputTensor {
	t.Contents = c
	return t
}

// withParams sets a gRPC input's parameters.
func withParams(t *pb.ModelInferRequest_InferInputTensor, p map[string]*pb.InferParameter) *pb.ModelInferRequest_InferInputTensor {
	t.Parameters = p
	return t
}

// infer is a gRPC infer request of model with inputs and their raw
// contents (one entry per input given raw).
func infer(model string, inputs []*pb.ModelInferRequest_InferInputTensor, raw ...[]byte) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{ModelName: model, Inputs: inputs, RawInputContents: raw}
}

// ins is a list of gRPC inputs.
func ins(t ...*pb.ModelInferRequest_InferInputTensor) []*pb.ModelInferRequest_InferInputTensor {
	return t
}

// modify returns a copy of r changed by f.
func modify(r *pb.ModelInferRequest, f func(*pb.ModelInferRequest)) *pb.ModelInferRequest {
	c := proto.Clone(r).(*pb.ModelInferRequest)
	f(c)
	return c
}

// outputs asks for the named outputs.
func outputs(r *pb.ModelInferRequest, names ...string) *pb.ModelInferRequest {
	return modify(r, func(c *pb.ModelInferRequest) {
		for _, n := range names {
			c.Outputs = append(c.Outputs, &pb.ModelInferRequest_InferRequestedOutputTensor{Name: n})
		}
	})
}

// params sets request parameters.
func params(r *pb.ModelInferRequest, p map[string]*pb.InferParameter) *pb.ModelInferRequest {
	return modify(r, func(c *pb.ModelInferRequest) { c.Parameters = p })
}

// Parameter values.

func pInt(v int64) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
}
func pUint(v uint64) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: v}}
}
func pBool(v bool) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: v}}
}
func pStr(v string) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: v}}
}
func pDouble(v float64) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: v}}
}

// seq is the parameters of a sequence's request.
func seq(id int64, start, end bool) map[string]*pb.InferParameter {
	p := map[string]*pb.InferParameter{"sequence_id": pInt(id)}
	if start {
		p["sequence_start"] = pBool(true)
	}
	if end {
		p["sequence_end"] = pBool(true)
	}
	return p
}

// jsonSeq is seq's parameters as HTTP JSON.
func jsonSeq(id int64, start, end bool) string {
	return fmt.Sprintf(`{"sequence_id":%d,"sequence_start":%t,"sequence_end":%t}`, id, start, end)
}

// addCorpusModels adds the models the corpus needs beyond the Triton
// folder's repository: a BYTES identity.
func addCorpusModels(t testing.TB, repo string) {
	interop.WriteConfig(t, repo, "identity_bytes", `name: "identity_bytes"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`)
}
