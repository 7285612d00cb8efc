package interop_test

import (
	"strconv"

	"github.com/tritontop/tritontop/triton/pb"
)

// explainedDiffs are the differences the simulator keeps from the real
// server, by key: each value is a sentence of docs/simulator.md's list
// (whitespace aside) that says why.
var explainedDiffs = map[string]string{
	"identity": "The simulator says what it is: its server metadata reports the Triton version it follows and adds the extension tritontop_simulator.",
	"tracing":  "This real server is built without tracing (it needs OpenTelemetry) and refuses trace settings; Triton's release builds, and the simulator, serve them.",
}

// corpus is the differential corpus: one line a request. Cases without a
// group share their switches' server pair and must not depend on each
// other; a group's cases run in order on a pair of their own.
func corpus(env corpusEnv) []corpusCase {
	var all []corpusCase
	for _, part := range [][]corpusCase{
		healthCases(), metadataCases(), configCases(),
		httpInferCases(), grpcInferCases(), streamCases(),
		sequenceCases(), shmCases(env), repositoryCases(),
		statisticsCases(), settingsCases(),
	} {
		all = append(all, part...)
	}
	return all
}

func healthCases() []corpusCase {
	return []corpusCase{
		hGet("http live", "/v2/health/live"),
		hGet("http ready", "/v2/health/ready"),
		hMethod("http live POST", "POST", "/v2/health/live"),
		hGet("http health unknown", "/v2/health/alive"),
		hGet("http model ready", "/v2/models/identity/ready"),
		hGet("http model ready v1", "/v2/models/identity/versions/1/ready"),
		hGet("http model ready v2", "/v2/models/identity/versions/2/ready"),
		hGet("http model ready unknown", "/v2/models/nosuch/ready"),
		hGet("http model ready bad version", "/v2/models/identity/versions/x/ready"),
		hMethod("http model ready POST", "POST", "/v2/models/identity/ready"),
		call("grpc live", "ServerLive", &pb.ServerLiveRequest{}),
		call("grpc ready", "ServerReady", &pb.ServerReadyRequest{}),
		health("grpc health check"),
		call("grpc model ready", "ModelReady", &pb.ModelReadyRequest{Name: "identity"}),
		call("grpc model ready v1", "ModelReady", &pb.ModelReadyRequest{Name: "identity", Version: "1"}),
		call("grpc model ready v2", "ModelReady", &pb.ModelReadyRequest{Name: "identity", Version: "2"}),
		call("grpc model ready bad version", "ModelReady", &pb.ModelReadyRequest{Name: "identity", Version: "x"}),
		call("grpc model ready unknown", "ModelReady", &pb.ModelReadyRequest{Name: "nosuch"}),
		call("grpc model ready no name", "ModelReady", &pb.ModelReadyRequest{}),
	}
}

// models are the repository's models.
var models = []string{"classifier", "identity", "identity_bytes", "identity_int32", "pipeline", "preprocess",
	"repeat_int32", "simple_dyna_sequence", "simple_sequence", "square_int32"}

func metadataCases() []corpusCase {
	out := []corpusCase{
		hGet("http server metadata", "/v2").explained("identity"),
		hMethod("http server metadata POST", "POST", "/v2"),
		call("grpc server metadata", "ServerMetadata", &pb.ServerMetadataRequest{}).explained("identity"),
		hGet("http metadata v1", "/v2/models/identity/versions/1"),
		hGet("http metadata v2", "/v2/models/identity/versions/2"),
		hGet("http metadata unknown", "/v2/models/nosuch"),
		hGet("http metadata trailing slash", "/v2/models/identity/"),
		hMethod("http metadata POST", "POST", "/v2/models/identity"),
		call("grpc metadata v1", "ModelMetadata", &pb.ModelMetadataRequest{Name: "identity", Version: "1"}),
		call("grpc metadata v2", "ModelMetadata", &pb.ModelMetadataRequest{Name: "identity", Version: "2"}),
		call("grpc metadata unknown", "ModelMetadata", &pb.ModelMetadataRequest{Name: "nosuch"}),
		call("grpc metadata no name", "ModelMetadata", &pb.ModelMetadataRequest{}),
	}
	for _, m := range models {
		out = append(out,
			hGet("http metadata "+m, "/v2/models/"+m),
			call("grpc metadata "+m, "ModelMetadata", &pb.ModelMetadataRequest{Name: m}))
	}
	return out
}

func configCases() []corpusCase {
	out := []corpusCase{
		hGet("http config v1", "/v2/models/identity/versions/1/config"),
		hGet("http config v3", "/v2/models/identity/versions/3/config"),
		hGet("http config unknown", "/v2/models/nosuch/config"),
		hMethod("http config POST", "POST", "/v2/models/identity/config"),
		call("grpc config v3", "ModelConfig", &pb.ModelConfigRequest{Name: "identity", Version: "3"}),
		call("grpc config unknown", "ModelConfig", &pb.ModelConfigRequest{Name: "nosuch"}),
	}
	for _, m := range models {
		out = append(out,
			hGet("http config "+m, "/v2/models/"+m+"/config"),
			call("grpc config "+m, "ModelConfig", &pb.ModelConfigRequest{Name: m}))
	}
	return out
}

// HTTP infer bodies of identity (FP32 INPUT0 [-1], max batch 8).
const (
	inferPath = "/v2/models/identity/infer"
	idInput   = `{"name":"INPUT0","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}`
)

func httpInferCases() []corpusCase {
	return []corpusCase{
		hPost("http infer", inferPath, `{"inputs":[`+idInput+`]}`),
		hPost("http infer id", inferPath, `{"id":"abc","inputs":[`+idInput+`]}`),
		hPost("http infer v1", "/v2/models/identity/versions/1/infer", `{"inputs":[`+idInput+`]}`),
		hPost("http infer v2", "/v2/models/identity/versions/2/infer", `{"inputs":[`+idInput+`]}`),
		hPost("http infer unknown model", "/v2/models/nosuch/infer", `{"inputs":[`+idInput+`]}`),
		hMethod("http infer GET", "GET", inferPath),
		hPost("http infer output", inferPath, `{"inputs":[`+idInput+`],"outputs":[{"name":"OUTPUT0"}]}`),
		hPost("http infer unknown output", inferPath, `{"inputs":[`+idInput+`],"outputs":[{"name":"OUTPUT9"}]}`),
		hPost("http infer output twice", inferPath, `{"inputs":[`+idInput+`],"outputs":[{"name":"OUTPUT0"},{"name":"OUTPUT0"}]}`),
		hPost("http infer unknown input", inferPath, `{"inputs":[{"name":"INPUT9","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}`),
		hPost("http infer wrong datatype", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,4],"data":[1,2,3,4]}]}`),
		hPost("http infer unknown datatype", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP33","shape":[1,4],"data":[1,2,3,4]}]}`),
		hPost("http infer batch over max", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[9,1],"data":[1,2,3,4,5,6,7,8,9]}]}`),
		hPost("http infer rank 1", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[4],"data":[1,2,3,4]}]}`),
		hPost("http infer rank 3", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2,2],"data":[1,2,3,4]}]}`),
		hPost("http infer negative dim", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,-4],"data":[1,2,3,4]}]}`),
		hPost("http infer data short", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"data":[1,2,3]}]}`),
		hPost("http infer data long", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"data":[1,2,3,4,5]}]}`),
		hPost("http infer data nested", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"data":[[1,2],[3,4]]}]}`),
		hPost("http infer data strings", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"data":["a","b","c","d"]}]}`),
		hPost("http infer data bool", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"data":[true,false,true,false]}]}`),
		hPost("http infer no data", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4]}]}`),
		hPost("http infer no inputs", inferPath, `{"inputs":[]}`),
		hPost("http infer no inputs key", inferPath, `{}`),
		hPost("http infer extra input", inferPath, `{"inputs":[`+idInput+`,{"name":"INPUT1","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}`),
		hPost("http infer input twice", inferPath, `{"inputs":[`+idInput+`,`+idInput+`]}`),
		hPost("http infer no shape", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","data":[1,2,3,4]}]}`),
		hPost("http infer no datatype", inferPath, `{"inputs":[{"name":"INPUT0","shape":[1,4],"data":[1,2,3,4]}]}`),
		hPost("http infer no name", inferPath, `{"inputs":[{"datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}`),
		hPost("http infer empty body", inferPath, ``),
		hPost("http infer broken json", inferPath, `{"inputs":[`),
		hPost("http infer spaces", inferPath, `    `),
		hPost("http infer trailing garbage", inferPath, `{"inputs":[`+idInput+`]} garbage`),
		hPost("http infer trailing object", inferPath, `{"inputs":[`+idInput+`]}{}`),
		hPost("http infer inputs not a list", inferPath, `{"inputs":{}}`),
		hPost("http infer zero elements", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,0],"data":[]}]}`),
		hPost("http infer int32", "/v2/models/identity_int32/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2,3],"data":[1,2,3,4,5,6]}]}`),
		hPost("http infer int32 floats", "/v2/models/identity_int32/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,2],"data":[1.5,2]}]}`),
		hPost("http infer int32 overflow", "/v2/models/identity_int32/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,1],"data":[4294967296]}]}`),
		hPost("http infer pipeline", "/v2/models/pipeline/infer", `{"inputs":[{"name":"IN","datatype":"FP32","shape":[1,16],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`),
		hPost("http infer pipeline wrong shape", "/v2/models/pipeline/infer", `{"inputs":[{"name":"IN","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}`),
		// Parameters.
		hPost("http infer unknown triton parameter", inferPath, `{"parameters":{"triton_nosuch":1},"inputs":[`+idInput+`]}`),
		hPost("http infer custom parameter", inferPath, `{"parameters":{"mine":"x"},"inputs":[`+idInput+`]}`),
		hPost("http infer priority", inferPath, `{"parameters":{"priority":1},"inputs":[`+idInput+`]}`),
		hPost("http infer priority string", inferPath, `{"parameters":{"priority":"high"},"inputs":[`+idInput+`]}`),
		hPost("http infer timeout", inferPath, `{"parameters":{"timeout":1000000},"inputs":[`+idInput+`]}`),
		hPost("http infer sequence on stateless", inferPath, `{"parameters":{"sequence_id":5,"sequence_start":true},"inputs":[`+idInput+`]}`),
		hPost("http infer binary_data_output", inferPath, `{"parameters":{"binary_data_output":true},"inputs":[`+idInput+`]}`),
		hPost("http infer parameters not an object", inferPath, `{"parameters":[1],"inputs":[`+idInput+`]}`),
		hPost("http infer output binary", inferPath, `{"inputs":[`+idInput+`],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`),
		hPost("http infer output binary false", inferPath, `{"inputs":[`+idInput+`],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":false}}]}`),
		hPost("http infer output classification", inferPath, `{"inputs":[`+idInput+`],"outputs":[{"name":"OUTPUT0","parameters":{"classification":2}}]}`),
		// The binary-tensor extension.
		hBinary("http binary input", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":16}}]}`, -1, f32(1, 2, 3, 4)),
		hBinary("http binary input and output", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":16}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`, -1, f32(1, 2, 3, 4)),
		hBinary("http binary size short", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":12}}]}`, -1, f32(1, 2, 3)),
		hBinary("http binary size past body", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":32}}]}`, -1, f32(1, 2, 3, 4)),
		hBinary("http binary bytes left over", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":16}}]}`, -1, f32(1, 2, 3, 4, 5)),
		hBinary("http binary with data", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"data":[1,2,3,4],"parameters":{"binary_data_size":16}}]}`, -1, f32(1, 2, 3, 4)),
		hBinary("http binary header past body", inferPath, `{"inputs":[`+idInput+`]}`, 4096),
		hBinary("http binary header cut", inferPath, `{"inputs":[`+idInput+`]}`, 10),
		hBinary("http binary header negative", inferPath, `{"inputs":[`+idInput+`]}`, -2),
		hBinary("http binary size string", inferPath, `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":"16"}}]}`, -1, f32(1, 2, 3, 4)),
		// BYTES tensors.
		hPost("http bytes", "/v2/models/identity_bytes/infer", `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,2],"data":["ab","cde"]}]}`),
		hPost("http bytes numbers", "/v2/models/identity_bytes/infer", `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,2],"data":[1,2]}]}`),
		hPost("http bytes short", "/v2/models/identity_bytes/infer", `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,3],"data":["ab","cde"]}]}`),
		hBinary("http bytes binary", "/v2/models/identity_bytes/infer", `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,2],"parameters":{"binary_data_size":13}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`, -1, strs("ab", "cde")),
		hBinary("http bytes binary count", "/v2/models/identity_bytes/infer", `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,3],"parameters":{"binary_data_size":13}}]}`, -1, strs("ab", "cde")),
		hBinary("http bytes binary cut length", "/v2/models/identity_bytes/infer", `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,2],"parameters":{"binary_data_size":11}}]}`, -1, strs("ab", "cde")[:11]),
		// Decoupled models refuse HTTP infer.
		hPost("http infer decoupled", "/v2/models/repeat_int32/infer", `{"inputs":[{"name":"IN","datatype":"INT32","shape":[1],"data":[1]},{"name":"DELAY","datatype":"UINT32","shape":[1],"data":[0]},{"name":"WAIT","datatype":"UINT32","shape":[1],"data":[0]}]}`),
	}
}

// gRPC infer requests of identity.
var (
	idReq   = infer("identity", ins(tensor("INPUT0", "FP32", 1, 4)), f32(1, 2, 3, 4))
	int32Re = infer("identity_int32", ins(tensor("INPUT0", "INT32", 1, 3)), i32(1, 2, 3))
)

func grpcInferCases() []corpusCase {
	return []corpusCase{
		call("grpc infer", "ModelInfer", idReq),
		call("grpc infer id", "ModelInfer", modify(idReq, func(r *pb.ModelInferRequest) { r.Id = "abc" })),
		call("grpc infer v1", "ModelInfer", modify(idReq, func(r *pb.ModelInferRequest) { r.ModelVersion = "1" })),
		call("grpc infer v2", "ModelInfer", modify(idReq, func(r *pb.ModelInferRequest) { r.ModelVersion = "2" })),
		call("grpc infer bad version", "ModelInfer", modify(idReq, func(r *pb.ModelInferRequest) { r.ModelVersion = "one" })),
		call("grpc infer unknown model", "ModelInfer", modify(idReq, func(r *pb.ModelInferRequest) { r.ModelName = "nosuch" })),
		call("grpc infer no model", "ModelInfer", modify(idReq, func(r *pb.ModelInferRequest) { r.ModelName = "" })),
		call("grpc infer output", "ModelInfer", outputs(idReq, "OUTPUT0")),
		call("grpc infer unknown output", "ModelInfer", outputs(idReq, "OUTPUT9")),
		call("grpc infer unknown input", "ModelInfer", infer("identity", ins(tensor("INPUT9", "FP32", 1, 4)), f32(1, 2, 3, 4))),
		call("grpc infer wrong datatype", "ModelInfer", infer("identity", ins(tensor("INPUT0", "INT32", 1, 4)), i32(1, 2, 3, 4))),
		call("grpc infer unknown datatype", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP33", 1, 4)), f32(1, 2, 3, 4))),
		call("grpc infer batch over max", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 9, 1)), f32(1, 2, 3, 4, 5, 6, 7, 8, 9))),
		call("grpc infer rank 1", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 4)), f32(1, 2, 3, 4))),
		call("grpc infer raw short", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 4)), f32(1, 2, 3))),
		call("grpc infer raw long", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 4)), f32(1, 2, 3, 4, 5))),
		call("grpc infer raw odd", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 4)), f32(1, 2, 3, 4)[:15])),
		call("grpc infer no data", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 4)))),
		call("grpc infer no inputs", "ModelInfer", infer("identity", nil)),
		call("grpc infer extra input", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 4), tensor("INPUT1", "FP32", 1, 4)), f32(1, 2, 3, 4), f32(1, 2, 3, 4))),
		call("grpc infer input twice", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 4), tensor("INPUT0", "FP32", 1, 4)), f32(1, 2, 3, 4), f32(1, 2, 3, 4))),
		call("grpc infer more raw than inputs", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 4)), f32(1, 2, 3, 4), f32(1))),
		call("grpc infer contents", "ModelInfer", infer("identity", ins(withContents(tensor("INPUT0", "FP32", 1, 4), &pb.InferTensorContents{Fp32Contents: []float32{1, 2, 3, 4}})))),
		call("grpc infer contents short", "ModelInfer", infer("identity", ins(withContents(tensor("INPUT0", "FP32", 1, 4), &pb.InferTensorContents{Fp32Contents: []float32{1, 2}})))),
		call("grpc infer contents wrong type", "ModelInfer", infer("identity", ins(withContents(tensor("INPUT0", "FP32", 1, 4), &pb.InferTensorContents{IntContents: []int32{1, 2, 3, 4}})))),
		call("grpc infer contents and raw", "ModelInfer", infer("identity", ins(withContents(tensor("INPUT0", "FP32", 1, 4), &pb.InferTensorContents{Fp32Contents: []float32{1, 2, 3, 4}})), f32(1, 2, 3, 4))),
		call("grpc infer int32", "ModelInfer", int32Re),
		call("grpc infer int32 contents", "ModelInfer", infer("identity_int32", ins(withContents(tensor("INPUT0", "INT32", 1, 2), &pb.InferTensorContents{IntContents: []int32{7, 8}})))),
		call("grpc infer zero elements", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 0)), []byte{})),
		call("grpc infer pipeline", "ModelInfer", infer("pipeline", ins(tensor("IN", "FP32", 1, 16)), f32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
		call("grpc infer pipeline unknown output", "ModelInfer", outputs(infer("pipeline", ins(tensor("IN", "FP32", 1, 16)), make([]byte, 64)), "features")),
		// Parameters.
		call("grpc infer unknown triton parameter", "ModelInfer", params(idReq, map[string]*pb.InferParameter{"triton_nosuch": pInt(1)})),
		call("grpc infer custom parameters", "ModelInfer", params(idReq, map[string]*pb.InferParameter{"a": pStr("x"), "b": pBool(true), "c": pDouble(0.5)})),
		call("grpc infer priority", "ModelInfer", params(idReq, map[string]*pb.InferParameter{"priority": pUint(1)})),
		call("grpc infer priority string", "ModelInfer", params(idReq, map[string]*pb.InferParameter{"priority": pStr("high")})),
		call("grpc infer timeout", "ModelInfer", params(idReq, map[string]*pb.InferParameter{"timeout": pInt(1000000)})),
		call("grpc infer timeout bool", "ModelInfer", params(idReq, map[string]*pb.InferParameter{"timeout": pBool(true)})),
		call("grpc infer sequence_id bool", "ModelInfer", params(idReq, map[string]*pb.InferParameter{"sequence_id": pBool(true)})),
		call("grpc infer sequence on stateless", "ModelInfer", params(idReq, seq(5, true, false))),
		call("grpc infer empty final on stateless", "ModelInfer", params(idReq, map[string]*pb.InferParameter{"triton_enable_empty_final_response": pBool(true)})),
		call("grpc infer input parameter", "ModelInfer", infer("identity", ins(withParams(tensor("INPUT0", "FP32", 1, 4), map[string]*pb.InferParameter{"x": pInt(1)})), f32(1, 2, 3, 4))),
		call("grpc infer output classification", "ModelInfer", modify(idReq, func(r *pb.ModelInferRequest) {
			r.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: map[string]*pb.InferParameter{"classification": pInt(2)}}}
		})),
		call("grpc infer shm region unknown", "ModelInfer", infer("identity", ins(withParams(tensor("INPUT0", "FP32", 1, 4), map[string]*pb.InferParameter{"shared_memory_region": pStr("nosuch"), "shared_memory_byte_size": pInt(16)})))),
		// BYTES tensors.
		call("grpc bytes raw", "ModelInfer", infer("identity_bytes", ins(tensor("INPUT0", "BYTES", 1, 2)), strs("ab", "cde"))),
		call("grpc bytes contents", "ModelInfer", infer("identity_bytes", ins(withContents(tensor("INPUT0", "BYTES", 1, 2), &pb.InferTensorContents{BytesContents: [][]byte{[]byte("ab"), []byte("cde")}})))),
		call("grpc bytes count", "ModelInfer", infer("identity_bytes", ins(tensor("INPUT0", "BYTES", 1, 3)), strs("ab", "cde"))),
		call("grpc bytes cut length", "ModelInfer", infer("identity_bytes", ins(tensor("INPUT0", "BYTES", 1, 2)), strs("ab", "cde")[:11])),
		call("grpc bytes contents count", "ModelInfer", infer("identity_bytes", ins(withContents(tensor("INPUT0", "BYTES", 1, 3), &pb.InferTensorContents{BytesContents: [][]byte{[]byte("ab")}})))),
		// Decoupled models refuse unary infer.
		call("grpc infer decoupled", "ModelInfer", infer("square_int32", ins(tensor("IN", "INT32", 1)), i32(2))),
	}
}

// Requests of the decoupled models.
var (
	repeatReq = infer("repeat_int32", ins(tensor("IN", "INT32", 3), tensor("DELAY", "UINT32", 3), tensor("WAIT", "UINT32", 1)), i32(4, 5, 6), u32(0, 0, 0), u32(0))
	squareReq = infer("square_int32", ins(tensor("IN", "INT32", 1)), i32(3))
	finalResp = map[string]*pb.InferParameter{"triton_enable_empty_final_response": pBool(true)}
)

func streamCases() []corpusCase {
	return []corpusCase{
		stream("stream repeat", repeatReq),
		stream("stream repeat final", params(repeatReq, finalResp)),
		stream("stream repeat id", modify(repeatReq, func(r *pb.ModelInferRequest) { r.Id = "r1" })),
		stream("stream repeat shapes differ", infer("repeat_int32", ins(tensor("IN", "INT32", 2), tensor("DELAY", "UINT32", 1), tensor("WAIT", "UINT32", 1)), i32(4, 5), u32(0), u32(0))),
		stream("stream repeat no WAIT", infer("repeat_int32", ins(tensor("IN", "INT32", 1), tensor("DELAY", "UINT32", 1)), i32(4), u32(0))),
		stream("stream repeat empty", params(infer("repeat_int32", ins(tensor("IN", "INT32", 0), tensor("DELAY", "UINT32", 0), tensor("WAIT", "UINT32", 1)), []byte{}, []byte{}, u32(0)), finalResp)),
		stream("stream square", squareReq),
		stream("stream square final", params(squareReq, finalResp)),
		stream("stream square zero final", params(infer("square_int32", ins(tensor("IN", "INT32", 1)), i32(0)), finalResp)),
		stream("stream square output", outputs(squareReq, "OUT")),
		stream("stream square unknown output", outputs(squareReq, "NOSUCH")),
		stream("stream square wrong shape", infer("square_int32", ins(tensor("IN", "INT32", 2)), i32(1, 2))),
		stream("stream identity", idReq),
		stream("stream identity two", modify(idReq, func(r *pb.ModelInferRequest) { r.Id = "a" })),
		stream("stream identity final", params(idReq, finalResp)),
		stream("stream unknown model", modify(idReq, func(r *pb.ModelInferRequest) { r.ModelName = "nosuch" })),
		stream("stream bad input then good", infer("identity", ins(tensor("INPUT9", "FP32", 1, 4)), f32(1, 2, 3, 4))),
		stream("stream nothing"),
	}
}

// simple_sequence and simple_dyna_sequence requests: INPUT INT32 [1,1].
func seqReq(model string, v int32, p map[string]*pb.InferParameter) *pb.ModelInferRequest {
	return params(infer(model, ins(tensor("INPUT", "INT32", 1, 1)), i32(v)), p)
}

func seqJSON(v int32, p string) string {
	return `{"parameters":` + p + `,"inputs":[{"name":"INPUT","datatype":"INT32","shape":[1,1],"data":[` + itoa(v) + `]}]}`
}

func sequenceCases() []corpusCase {
	const s, d = "simple_sequence", "simple_dyna_sequence"
	sp, dp := "/v2/models/"+s+"/infer", "/v2/models/"+d+"/infer"
	return []corpusCase{
		call("grpc seq no id", "ModelInfer", seqReq(s, 1, nil)).in("seq"),
		call("grpc seq start", "ModelInfer", seqReq(s, 0, seq(1000, true, false))).in("seq"),
		call("grpc seq next", "ModelInfer", seqReq(s, 11, seq(1000, false, false))).in("seq"),
		call("grpc seq end", "ModelInfer", seqReq(s, 1, seq(1000, false, true))).in("seq"),
		call("grpc seq after end", "ModelInfer", seqReq(s, 1, seq(1000, false, false))).in("seq"),
		call("grpc seq never started", "ModelInfer", seqReq(s, 1, seq(1001, false, false))).in("seq"),
		call("grpc seq id 0", "ModelInfer", seqReq(s, 1, seq(0, true, false))).in("seq"),
		call("grpc seq start end", "ModelInfer", seqReq(s, 5, seq(1002, true, true))).in("seq"),
		call("grpc seq string id", "ModelInfer", seqReq(s, 5, map[string]*pb.InferParameter{"sequence_id": pStr("abc"), "sequence_start": pBool(true)})).in("seq"),
		call("grpc seq start int", "ModelInfer", seqReq(s, 5, map[string]*pb.InferParameter{"sequence_id": pInt(1003), "sequence_start": pInt(1)})).in("seq"),
		call("grpc seq end string", "ModelInfer", seqReq(s, 5, map[string]*pb.InferParameter{"sequence_id": pInt(1003), "sequence_end": pStr("yes")})).in("seq"),
		call("grpc seq id uint", "ModelInfer", seqReq(s, 5, map[string]*pb.InferParameter{"sequence_id": pUint(1004), "sequence_start": pBool(true)})).in("seq"),
		call("grpc seq batch 2", "ModelInfer", params(infer(s, ins(tensor("INPUT", "INT32", 2, 1)), i32(1, 2)), seq(1005, true, false))).in("seq"),
		call("grpc dyna start", "ModelInfer", seqReq(d, 0, seq(2000, true, false))).in("seq"),
		call("grpc dyna next", "ModelInfer", seqReq(d, 7, seq(2000, false, false))).in("seq"),
		call("grpc dyna end", "ModelInfer", seqReq(d, 3, seq(2000, false, true))).in("seq"),
		call("grpc dyna after end", "ModelInfer", seqReq(d, 3, seq(2000, false, true))).in("seq"),
		call("grpc dyna no id", "ModelInfer", seqReq(d, 3, nil)).in("seq"),
		stream("stream seq", seqReq(s, 0, seq(1100, true, false)), seqReq(s, 4, seq(1100, false, false)), seqReq(s, 5, seq(1100, false, true))).in("seq"),
		stream("stream seq never started", seqReq(s, 4, seq(1101, false, false))).in("seq"),
		hPost("http seq no id", sp, seqJSON(1, `{}`)).in("seq"),
		hPost("http seq start", sp, seqJSON(0, jsonSeq(3000, true, false))).in("seq"),
		hPost("http seq next", sp, seqJSON(11, jsonSeq(3000, false, false))).in("seq"),
		hPost("http seq end", sp, seqJSON(1, jsonSeq(3000, false, true))).in("seq"),
		hPost("http seq after end", sp, seqJSON(1, jsonSeq(3000, false, false))).in("seq"),
		hPost("http seq id 0", sp, seqJSON(1, jsonSeq(0, true, false))).in("seq"),
		hPost("http seq string id", sp, seqJSON(1, `{"sequence_id":"abc","sequence_start":true}`)).in("seq"),
		hPost("http seq start int", sp, seqJSON(1, `{"sequence_id":3001,"sequence_start":1}`)).in("seq"),
		hPost("http seq id float", sp, seqJSON(1, `{"sequence_id":3001.5,"sequence_start":true}`)).in("seq"),
		hPost("http dyna start", dp, seqJSON(0, jsonSeq(4000, true, false))).in("seq"),
		hPost("http dyna end", dp, seqJSON(2, jsonSeq(4000, false, true))).in("seq"),
		hPost("http dyna never started", dp, seqJSON(2, jsonSeq(4001, false, true))).in("seq"),
	}
}

func shmCases(env corpusEnv) []corpusCase {
	g, h := env.shmKey("shm_grpc"), env.shmKey("shm_http")
	shmIn := func(region string, size int64) *pb.ModelInferRequest {
		return infer("identity_int32", ins(withParams(tensor("INPUT0", "INT32", 1, 16),
			map[string]*pb.InferParameter{"shared_memory_region": pStr(region), "shared_memory_byte_size": pInt(size)})))
	}
	shmOut := func(r *pb.ModelInferRequest, region string, offset, size int64) *pb.ModelInferRequest {
		return modify(r, func(c *pb.ModelInferRequest) {
			c.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: map[string]*pb.InferParameter{
				"shared_memory_region": pStr(region), "shared_memory_offset": pInt(offset), "shared_memory_byte_size": pInt(size)}}}
		})
	}
	reg := func(name, key string, off, size uint64) *pb.SystemSharedMemoryRegisterRequest {
		return &pb.SystemSharedMemoryRegisterRequest{Name: name, Key: key, Offset: off, ByteSize: size}
	}
	httpIn := func(region string, size int) string {
		return `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"parameters":{"shared_memory_region":"` + region + `","shared_memory_byte_size":` + itoa(int32(size)) + `}}]`
	}
	const ip = "/v2/models/identity_int32/infer"
	return []corpusCase{
		// Without --allow-client-shm (the shared server).
		call("grpc shm off register", "SystemSharedMemoryRegister", reg("r", g, 0, 64)),
		call("grpc shm off unregister", "SystemSharedMemoryUnregister", &pb.SystemSharedMemoryUnregisterRequest{Name: "r"}),
		call("grpc shm off unregister all", "SystemSharedMemoryUnregister", &pb.SystemSharedMemoryUnregisterRequest{}),
		call("grpc shm off status", "SystemSharedMemoryStatus", &pb.SystemSharedMemoryStatusRequest{}),
		call("grpc shm off status unknown", "SystemSharedMemoryStatus", &pb.SystemSharedMemoryStatusRequest{Name: "r"}),
		call("grpc cuda off register", "CudaSharedMemoryRegister", &pb.CudaSharedMemoryRegisterRequest{Name: "c", RawHandle: []byte("x"), ByteSize: 64}),
		call("grpc cuda off unregister", "CudaSharedMemoryUnregister", &pb.CudaSharedMemoryUnregisterRequest{Name: "c"}),
		call("grpc cuda off status", "CudaSharedMemoryStatus", &pb.CudaSharedMemoryStatusRequest{}),
		call("grpc cuda off status unknown", "CudaSharedMemoryStatus", &pb.CudaSharedMemoryStatusRequest{Name: "c"}),
		hPost("http shm off register", "/v2/systemsharedmemory/region/r/register", `{"key":"`+h+`","offset":0,"byte_size":64}`),
		hPost("http shm off register no region", "/v2/systemsharedmemory/register", `{"key":"`+h+`","offset":0,"byte_size":64}`),
		hPost("http shm off unregister", "/v2/systemsharedmemory/region/r/unregister", ""),
		hPost("http shm off unregister all", "/v2/systemsharedmemory/unregister", ""),
		hGet("http shm off status", "/v2/systemsharedmemory/status"),
		hGet("http shm off status unknown", "/v2/systemsharedmemory/region/r/status"),
		hMethod("http shm off status POST", "POST", "/v2/systemsharedmemory/status"),
		hPost("http cuda off register", "/v2/cudasharedmemory/region/c/register", `{"raw_handle":{"b64":"eA=="},"device_id":0,"byte_size":64}`),
		hPost("http cuda off unregister", "/v2/cudasharedmemory/region/c/unregister", ""),
		hGet("http cuda off status", "/v2/cudasharedmemory/status"),
		hGet("http cuda off status unknown", "/v2/cudasharedmemory/region/c/status"),
		hPost("http shm off infer", ip, httpIn("r", 64)+`}`),
		// With --allow-client-shm=true: gRPC.
		call("grpc shm register", "SystemSharedMemoryRegister", reg("in", g, 0, 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm register again", "SystemSharedMemoryRegister", reg("in", g, 0, 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm register out", "SystemSharedMemoryRegister", reg("out", g, 4096, 128)).on(shmOn).in("shm_grpc"),
		call("grpc shm register unaligned", "SystemSharedMemoryRegister", reg("x", g, 1024, 128)).on(shmOn).in("shm_grpc"),
		call("grpc shm register no key", "SystemSharedMemoryRegister", reg("x", "", 0, 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm register missing key", "SystemSharedMemoryRegister", reg("x", "/tritontop_corpus_nosuch", 0, 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm register past end", "SystemSharedMemoryRegister", reg("x", g, 8000, 200)).on(shmOn).in("shm_grpc"),
		call("grpc shm register reserved", "SystemSharedMemoryRegister", reg("x", "/triton_python_backend_shm_region_1", 0, 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm status", "SystemSharedMemoryStatus", &pb.SystemSharedMemoryStatusRequest{}).on(shmOn).in("shm_grpc"),
		call("grpc shm status one", "SystemSharedMemoryStatus", &pb.SystemSharedMemoryStatusRequest{Name: "out"}).on(shmOn).in("shm_grpc"),
		call("grpc shm status unknown", "SystemSharedMemoryStatus", &pb.SystemSharedMemoryStatusRequest{Name: "x"}).on(shmOn).in("shm_grpc"),
		call("grpc shm infer", "ModelInfer", shmIn("in", 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm infer out", "ModelInfer", shmOut(shmIn("in", 64), "out", 0, 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm infer out offset", "ModelInfer", shmOut(shmIn("in", 64), "out", 64, 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm infer out small", "ModelInfer", shmOut(shmIn("in", 64), "out", 0, 32)).on(shmOn).in("shm_grpc"),
		call("grpc shm infer out past end", "ModelInfer", shmOut(shmIn("in", 64), "out", 100, 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm infer size wrong", "ModelInfer", shmIn("in", 32)).on(shmOn).in("shm_grpc"),
		call("grpc shm infer size past region", "ModelInfer", shmIn("in", 128)).on(shmOn).in("shm_grpc"),
		call("grpc shm infer unknown region", "ModelInfer", shmIn("nosuch", 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm infer no size", "ModelInfer", infer("identity_int32", ins(withParams(tensor("INPUT0", "INT32", 1, 16), map[string]*pb.InferParameter{"shared_memory_region": pStr("in")})))).on(shmOn).in("shm_grpc"),
		call("grpc shm infer region int", "ModelInfer", infer("identity_int32", ins(withParams(tensor("INPUT0", "INT32", 1, 16), map[string]*pb.InferParameter{"shared_memory_region": pInt(1), "shared_memory_byte_size": pInt(64)})))).on(shmOn).in("shm_grpc"),
		call("grpc shm infer size without region", "ModelInfer", infer("identity_int32", ins(withParams(tensor("INPUT0", "INT32", 1, 16), map[string]*pb.InferParameter{"shared_memory_byte_size": pInt(64)})))).on(shmOn).in("shm_grpc"),
		call("grpc shm unregister", "SystemSharedMemoryUnregister", &pb.SystemSharedMemoryUnregisterRequest{Name: "in"}).on(shmOn).in("shm_grpc"),
		call("grpc shm unregister unknown", "SystemSharedMemoryUnregister", &pb.SystemSharedMemoryUnregisterRequest{Name: "in"}).on(shmOn).in("shm_grpc"),
		call("grpc shm infer after unregister", "ModelInfer", shmIn("in", 64)).on(shmOn).in("shm_grpc"),
		call("grpc shm unregister all", "SystemSharedMemoryUnregister", &pb.SystemSharedMemoryUnregisterRequest{}).on(shmOn).in("shm_grpc"),
		call("grpc shm status after", "SystemSharedMemoryStatus", &pb.SystemSharedMemoryStatusRequest{}).on(shmOn).in("shm_grpc"),
		call("grpc cuda register", "CudaSharedMemoryRegister", &pb.CudaSharedMemoryRegisterRequest{Name: "c", RawHandle: []byte("x"), ByteSize: 64}).on(shmOn).in("shm_grpc"),
		call("grpc cuda unregister", "CudaSharedMemoryUnregister", &pb.CudaSharedMemoryUnregisterRequest{Name: "c"}).on(shmOn).in("shm_grpc"),
		// With --allow-client-shm=true: HTTP.
		hPost("http shm register", "/v2/systemsharedmemory/region/in/register", `{"key":"`+h+`","offset":0,"byte_size":64}`).on(shmOn).in("shm_http"),
		hPost("http shm register again", "/v2/systemsharedmemory/region/in/register", `{"key":"`+h+`","offset":0,"byte_size":64}`).on(shmOn).in("shm_http"),
		hPost("http shm register out", "/v2/systemsharedmemory/region/out/register", `{"key":"`+h+`","offset":4096,"byte_size":128}`).on(shmOn).in("shm_http"),
		hPost("http shm register unaligned", "/v2/systemsharedmemory/region/x/register", `{"key":"`+h+`","offset":1024,"byte_size":128}`).on(shmOn).in("shm_http"),
		hPost("http shm register no region", "/v2/systemsharedmemory/register", `{"key":"`+h+`","offset":0,"byte_size":64}`).on(shmOn).in("shm_http"),
		hPost("http shm register no key", "/v2/systemsharedmemory/region/x/register", `{"offset":0,"byte_size":64}`).on(shmOn).in("shm_http"),
		hPost("http shm register no size", "/v2/systemsharedmemory/region/x/register", `{"key":"`+h+`","offset":0}`).on(shmOn).in("shm_http"),
		hPost("http shm register key number", "/v2/systemsharedmemory/region/x/register", `{"key":1,"offset":0,"byte_size":64}`).on(shmOn).in("shm_http"),
		hPost("http shm register size string", "/v2/systemsharedmemory/region/x/register", `{"key":"`+h+`","offset":0,"byte_size":"64"}`).on(shmOn).in("shm_http"),
		hPost("http shm register size negative", "/v2/systemsharedmemory/region/x/register", `{"key":"`+h+`","offset":0,"byte_size":-1}`).on(shmOn).in("shm_http"),
		hPost("http shm register empty body", "/v2/systemsharedmemory/region/x/register", ``).on(shmOn).in("shm_http"),
		hPost("http shm register missing key", "/v2/systemsharedmemory/region/x/register", `{"key":"/tritontop_corpus_nosuch","offset":0,"byte_size":64}`).on(shmOn).in("shm_http"),
		hPost("http shm register past end", "/v2/systemsharedmemory/region/x/register", `{"key":"`+h+`","offset":8000,"byte_size":200}`).on(shmOn).in("shm_http"),
		hGet("http shm status", "/v2/systemsharedmemory/status").on(shmOn).in("shm_http"),
		hGet("http shm status one", "/v2/systemsharedmemory/region/in/status").on(shmOn).in("shm_http"),
		hGet("http shm status unknown", "/v2/systemsharedmemory/region/x/status").on(shmOn).in("shm_http"),
		hPost("http shm infer", ip, httpIn("in", 64)+`}`).on(shmOn).in("shm_http"),
		hPost("http shm infer out", ip, httpIn("in", 64)+`,"outputs":[{"name":"OUTPUT0","parameters":{"shared_memory_region":"out","shared_memory_byte_size":64}}]}`).on(shmOn).in("shm_http"),
		hPost("http shm infer out binary", ip, httpIn("in", 64)+`,"outputs":[{"name":"OUTPUT0","parameters":{"shared_memory_region":"out","shared_memory_byte_size":64,"binary_data":true}}]}`).on(shmOn).in("shm_http"),
		hPost("http shm infer out small", ip, httpIn("in", 64)+`,"outputs":[{"name":"OUTPUT0","parameters":{"shared_memory_region":"out","shared_memory_byte_size":16}}]}`).on(shmOn).in("shm_http"),
		hPost("http shm infer size wrong", ip, httpIn("in", 32)+`}`).on(shmOn).in("shm_http"),
		hPost("http shm infer unknown region", ip, httpIn("nosuch", 64)+`}`).on(shmOn).in("shm_http"),
		hPost("http shm infer with data", ip, `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,1],"data":[1],"parameters":{"shared_memory_region":"in","shared_memory_byte_size":4}}]}`).on(shmOn).in("shm_http"),
		hPost("http shm unregister", "/v2/systemsharedmemory/region/in/unregister", "").on(shmOn).in("shm_http"),
		hPost("http shm unregister unknown", "/v2/systemsharedmemory/region/in/unregister", "").on(shmOn).in("shm_http"),
		hPost("http shm unregister all", "/v2/systemsharedmemory/unregister", "").on(shmOn).in("shm_http"),
		hGet("http shm status after", "/v2/systemsharedmemory/status").on(shmOn).in("shm_http"),
		hPost("http cuda register", "/v2/cudasharedmemory/region/c/register", `{"raw_handle":{"b64":"eA=="},"device_id":0,"byte_size":64}`).on(shmOn).in("shm_http"),
		hPost("http cuda unregister", "/v2/cudasharedmemory/region/c/unregister", "").on(shmOn).in("shm_http"),
	}
}

func repositoryCases() []corpusCase {
	const override = `{"parameters":{"config":"{\"backend\":\"identity\",\"max_batch_size\":16,\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}],\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]}"}}`
	loadOverride := func(cfg string) *pb.RepositoryModelLoadRequest {
		return &pb.RepositoryModelLoadRequest{ModelName: "identity_int32", Parameters: map[string]*pb.ModelRepositoryParameter{
			"config": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: cfg}}}}
	}
	const grpcCfg = `{"backend":"identity","max_batch_size":4,"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`
	return []corpusCase{
		// Model control mode none (the shared server).
		hPost("http index", "/v2/repository/index", ""),
		hPost("http index ready", "/v2/repository/index", `{"ready":true}`),
		hPost("http index bad json", "/v2/repository/index", `{"ready":`),
		hGet("http index GET", "/v2/repository/index"),
		hPost("http index named", "/v2/repository/models2/index", ""),
		hPost("http load none mode", "/v2/repository/models/identity/load", ""),
		hPost("http unload none mode", "/v2/repository/models/identity/unload", ""),
		call("grpc index", "RepositoryIndex", &pb.RepositoryIndexRequest{}),
		call("grpc index ready", "RepositoryIndex", &pb.RepositoryIndexRequest{Ready: true}),
		call("grpc index named", "RepositoryIndex", &pb.RepositoryIndexRequest{RepositoryName: "models2"}),
		call("grpc load none mode", "RepositoryModelLoad", &pb.RepositoryModelLoadRequest{ModelName: "identity"}),
		call("grpc unload none mode", "RepositoryModelUnload", &pb.RepositoryModelUnloadRequest{ModelName: "identity"}),
		// Explicit model control: gRPC.
		call("grpc unload", "RepositoryModelUnload", &pb.RepositoryModelUnloadRequest{ModelName: "identity"}).on(explicit).in("repo_grpc"),
		call("grpc unloaded ready", "ModelReady", &pb.ModelReadyRequest{Name: "identity"}).on(explicit).in("repo_grpc"),
		call("grpc unloaded metadata", "ModelMetadata", &pb.ModelMetadataRequest{Name: "identity"}).on(explicit).in("repo_grpc"),
		call("grpc unloaded infer", "ModelInfer", idReq).on(explicit).in("repo_grpc"),
		call("grpc unloaded index", "RepositoryIndex", &pb.RepositoryIndexRequest{}).on(explicit).in("repo_grpc").settled("UNLOADING"),
		call("grpc unload again", "RepositoryModelUnload", &pb.RepositoryModelUnloadRequest{ModelName: "identity"}).on(explicit).in("repo_grpc"),
		call("grpc unload unknown", "RepositoryModelUnload", &pb.RepositoryModelUnloadRequest{ModelName: "nosuch"}).on(explicit).in("repo_grpc"),
		call("grpc load", "RepositoryModelLoad", &pb.RepositoryModelLoadRequest{ModelName: "identity"}).on(explicit).in("repo_grpc"),
		call("grpc loaded ready", "ModelReady", &pb.ModelReadyRequest{Name: "identity"}).on(explicit).in("repo_grpc"),
		call("grpc load unknown", "RepositoryModelLoad", &pb.RepositoryModelLoadRequest{ModelName: "nosuch"}).on(explicit).in("repo_grpc"),
		call("grpc load named repository", "RepositoryModelLoad", &pb.RepositoryModelLoadRequest{RepositoryName: "r", ModelName: "identity"}).on(explicit).in("repo_grpc"),
		call("grpc load override", "RepositoryModelLoad", loadOverride(grpcCfg)).on(explicit).in("repo_grpc"),
		call("grpc override config", "ModelConfig", &pb.ModelConfigRequest{Name: "identity_int32"}).on(explicit).in("repo_grpc"),
		call("grpc override infer batch 5", "ModelInfer", infer("identity_int32", ins(tensor("INPUT0", "INT32", 5, 1)), i32(1, 2, 3, 4, 5))).on(explicit).in("repo_grpc"),
		call("grpc load override bad json", "RepositoryModelLoad", loadOverride(`{"backend":`)).on(explicit).in("repo_grpc"),
		call("grpc load override unknown field", "RepositoryModelLoad", loadOverride(`{"backend":"identity","nosuch":1}`)).on(explicit).in("repo_grpc"),
		call("grpc load override bad dims", "RepositoryModelLoad", loadOverride(`{"backend":"identity","max_batch_size":4,"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[0]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`)).on(explicit).in("repo_grpc"),
		call("grpc load override not string", "RepositoryModelLoad", &pb.RepositoryModelLoadRequest{ModelName: "identity_int32", Parameters: map[string]*pb.ModelRepositoryParameter{
			"config": {ParameterChoice: &pb.ModelRepositoryParameter_BoolParam{BoolParam: true}}}}).on(explicit).in("repo_grpc"),
		call("grpc load unknown parameter", "RepositoryModelLoad", &pb.RepositoryModelLoadRequest{ModelName: "identity_int32", Parameters: map[string]*pb.ModelRepositoryParameter{
			"nosuch": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: "x"}}}}).on(explicit).in("repo_grpc"),
		call("grpc after bad override config", "ModelConfig", &pb.ModelConfigRequest{Name: "identity_int32"}).on(explicit).in("repo_grpc"),
		call("grpc unload pipeline dependents", "RepositoryModelUnload", &pb.RepositoryModelUnloadRequest{ModelName: "pipeline", Parameters: map[string]*pb.ModelRepositoryParameter{
			"unload_dependents": {ParameterChoice: &pb.ModelRepositoryParameter_BoolParam{BoolParam: true}}}}).on(explicit).in("repo_grpc"),
		// Ready models only: the unloaded ensemble may be UNLOADING still.
		call("grpc index after dependents", "RepositoryIndex", &pb.RepositoryIndexRequest{Ready: true}).on(explicit).in("repo_grpc"),
		call("grpc load pipeline", "RepositoryModelLoad", &pb.RepositoryModelLoadRequest{ModelName: "pipeline"}).on(explicit).in("repo_grpc"),
		call("grpc index ready explicit", "RepositoryIndex", &pb.RepositoryIndexRequest{Ready: true}).on(explicit).in("repo_grpc"),
		// Explicit model control: HTTP.
		hPost("http unload", "/v2/repository/models/identity/unload", "").on(explicit).in("repo_http"),
		hGet("http unloaded ready", "/v2/models/identity/ready").on(explicit).in("repo_http"),
		hGet("http unloaded config", "/v2/models/identity/config").on(explicit).in("repo_http"),
		hPost("http unloaded infer", inferPath, `{"inputs":[`+idInput+`]}`).on(explicit).in("repo_http"),
		hPost("http unloaded index", "/v2/repository/index", "").on(explicit).in("repo_http").settled("UNLOADING"),
		hPost("http unload unknown", "/v2/repository/models/nosuch/unload", "").on(explicit).in("repo_http"),
		hPost("http load", "/v2/repository/models/identity/load", "").on(explicit).in("repo_http"),
		hGet("http loaded ready", "/v2/models/identity/ready").on(explicit).in("repo_http"),
		hPost("http load unknown", "/v2/repository/models/nosuch/load", "").on(explicit).in("repo_http"),
		hPost("http load named repository", "/v2/repository/r/models/identity/load", "").on(explicit).in("repo_http"),
		hPost("http load override", "/v2/repository/models/identity_int32/load", override).on(explicit).in("repo_http"),
		hGet("http override config", "/v2/models/identity_int32/config").on(explicit).in("repo_http"),
		hPost("http load override bad json", "/v2/repository/models/identity_int32/load", `{"parameters":{"config":"{\"backend\":"}}`).on(explicit).in("repo_http"),
		hPost("http load override not string", "/v2/repository/models/identity_int32/load", `{"parameters":{"config":{}}}`).on(explicit).in("repo_http"),
		hPost("http load unknown parameter", "/v2/repository/models/identity_int32/load", `{"parameters":{"nosuch":"x"}}`).on(explicit).in("repo_http"),
		hPost("http load body not json", "/v2/repository/models/identity_int32/load", `{`).on(explicit).in("repo_http"),
		hPost("http load override negative batch", "/v2/repository/models/identity_int32/load", `{"parameters":{"config":"{\"backend\":\"identity\",\"max_batch_size\":-1}"}}`).on(explicit).in("repo_http"),
		hPost("http unload dependents", "/v2/repository/models/pipeline/unload", `{"parameters":{"unload_dependents":true}}`).on(explicit).in("repo_http"),
		hPost("http index after dependents", "/v2/repository/index", `{"ready":true}`).on(explicit).in("repo_http"),
	}
}

func statisticsCases() []corpusCase {
	return []corpusCase{
		hGet("http stats fresh", "/v2/models/identity/stats").in("stats"),
		call("grpc stats fresh", "ModelStatistics", &pb.ModelStatisticsRequest{Name: "identity"}).in("stats"),
		call("grpc stats infer 1", "ModelInfer", idReq).in("stats"),
		hPost("http stats infer 2", inferPath, `{"inputs":[`+idInput+`]}`).in("stats"),
		call("grpc stats infer fails", "ModelInfer", infer("identity", ins(tensor("INPUT0", "FP32", 1, 4)), f32(1))).in("stats"),
		call("grpc stats infer pipeline", "ModelInfer", infer("pipeline", ins(tensor("IN", "FP32", 2, 16)), make([]byte, 128))).in("stats"),
		stream("stream stats square", squareReq).in("stats"),
		hGet("http stats identity", "/v2/models/identity/stats").in("stats"),
		hGet("http stats identity v1", "/v2/models/identity/versions/1/stats").in("stats"),
		hGet("http stats identity v2", "/v2/models/identity/versions/2/stats").in("stats"),
		hGet("http stats unknown", "/v2/models/nosuch/stats").in("stats"),
		hGet("http stats all", "/v2/models/stats").in("stats"),
		hMethod("http stats POST", "POST", "/v2/models/stats").in("stats"),
		call("grpc stats identity", "ModelStatistics", &pb.ModelStatisticsRequest{Name: "identity"}).in("stats"),
		call("grpc stats pipeline", "ModelStatistics", &pb.ModelStatisticsRequest{Name: "pipeline"}).in("stats"),
		call("grpc stats preprocess", "ModelStatistics", &pb.ModelStatisticsRequest{Name: "preprocess"}).in("stats"),
		call("grpc stats square after stream", "ModelStatistics", &pb.ModelStatisticsRequest{Name: "square_int32"}).in("stats"),
		call("grpc stats v2", "ModelStatistics", &pb.ModelStatisticsRequest{Name: "identity", Version: "2"}).in("stats"),
		call("grpc stats unknown", "ModelStatistics", &pb.ModelStatisticsRequest{Name: "nosuch"}).in("stats"),
		call("grpc stats all", "ModelStatistics", &pb.ModelStatisticsRequest{}).in("stats"),
	}
}

func settingsCases() []corpusCase {
	setLog := func(k string, v *pb.LogSettingsRequest_SettingValue) *pb.LogSettingsRequest {
		return &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{k: v}}
	}
	return []corpusCase{
		hGet("http trace", "/v2/trace/setting").explained("tracing"),
		hPost("http trace set", "/v2/trace/setting", `{"trace_rate":"10"}`).explained("tracing"),
		hGet("http trace model", "/v2/models/identity/trace/setting").explained("tracing"),
		call("grpc trace", "TraceSetting", &pb.TraceSettingRequest{}).explained("tracing"),
		call("grpc trace model", "TraceSetting", &pb.TraceSettingRequest{ModelName: "identity"}).explained("tracing"),
		hGet("http log", "/v2/logging").in("log"),
		hPost("http log verbose", "/v2/logging", `{"log_verbose_level":1}`).in("log"),
		hPost("http log verbose string", "/v2/logging", `{"log_verbose_level":"1"}`).in("log"),
		hPost("http log info number", "/v2/logging", `{"log_info":1}`).in("log"),
		hPost("http log unknown", "/v2/logging", `{"nosuch":true}`).in("log"),
		hPost("http log format", "/v2/logging", `{"log_format":"ISO8601"}`).in("log"),
		hPost("http log format bad", "/v2/logging", `{"log_format":"xml"}`).in("log"),
		hMethod("http log PUT", "PUT", "/v2/logging").in("log"),
		call("grpc log", "LogSettings", &pb.LogSettingsRequest{}).in("log"),
		call("grpc log verbose", "LogSettings", setLog("log_verbose_level", &pb.LogSettingsRequest_SettingValue{ParameterChoice: &pb.LogSettingsRequest_SettingValue_Uint32Param{Uint32Param: 0}})).in("log"),
		call("grpc log info string", "LogSettings", setLog("log_info", &pb.LogSettingsRequest_SettingValue{ParameterChoice: &pb.LogSettingsRequest_SettingValue_StringParam{StringParam: "x"}})).in("log"),
		call("grpc log unknown", "LogSettings", setLog("nosuch", &pb.LogSettingsRequest_SettingValue{ParameterChoice: &pb.LogSettingsRequest_SettingValue_BoolParam{BoolParam: true}})).in("log"),
		call("grpc log file", "LogSettings", setLog("log_file", &pb.LogSettingsRequest_SettingValue{ParameterChoice: &pb.LogSettingsRequest_SettingValue_StringParam{StringParam: "/nonexistent/dir/x.log"}})).in("log"),
	}
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }
