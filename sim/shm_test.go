//go:build linux

package sim

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton/pb"
)

// shmCreate creates and maps a POSIX shared-memory object of size bytes,
// as tritonclient.utils.shared_memory.create_shared_memory_region does, and
// returns its key ("/name", unique to the test) and its mapping. The object
// is unlinked when the test ends.
func shmCreate(t *testing.T, name string, size int) (string, []byte) {
	t.Helper()
	key := fmt.Sprintf("/%s_%d_%s", name, os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"))
	path := filepath.Join("/dev/shm", key[1:])
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Cleanup(func() { os.Remove(path) })
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	return key, mem
}

// putInt32s writes v little-endian into b.
func putInt32s(b []byte, v []int32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
}

// getInt32s reads n little-endian int32s from b.
func getInt32s(b []byte, n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// exampleInputs are simple_*_shm_client's inputs: 0..15 and sixteen ones.
func exampleInputs() (in0, in1 []int32) {
	for i := range 16 {
		in0 = append(in0, int32(i))
		in1 = append(in1, 1)
	}
	return in0, in1
}

// checkSumsAndDifferences checks what the example checks: OUTPUT0 holds
// the sums, OUTPUT1 the differences.
func checkSumsAndDifferences(t *testing.T, out []byte, in0, in1 []int32) {
	t.Helper()
	sum, diff := getInt32s(out, 16), getInt32s(out[64:], 16)
	for i := range 16 {
		if sum[i] != in0[i]+in1[i] {
			t.Fatalf("shm infer error: incorrect sum: %d + %d = %d", in0[i], in1[i], sum[i])
		}
		if diff[i] != in0[i]-in1[i] {
			t.Fatalf("shm infer error: incorrect difference: %d - %d = %d", in0[i], in1[i], diff[i])
		}
	}
}

// successCount is the simulator's count of successful requests of model.
func successCount(t *testing.T, s *Server, model string) (requests, inferences uint64) {
	t.Helper()
	st, err := s.Engine().ModelStatistics(model, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.GetModelStats() {
		requests += m.GetInferenceStats().GetSuccess().GetCount()
		inferences += m.GetInferenceCount()
	}
	return requests, inferences
}

func shmParam(s string) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: s}}
}

func i64Param(n int64) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: n}}
}

// TestGRPCSimpleShmClient makes the calls of Triton's
// src/python/examples/simple_grpc_shm_client.py (the Python tritonclient
// cannot be installed here) in its order over a real gRPC connection:
// unregister everything, create and register an output and an input
// region, infer with every tensor in shared memory, read the sums and
// differences from the output region, read the status, unregister.
func TestGRPCSimpleShmClient(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{AllowClientShm: true})
	c, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	if _, err := c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	const byteSize = 64
	outKey, outMem := shmCreate(t, "output_simple", 2*byteSize)
	if _, err := c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "output_data", Key: outKey, ByteSize: 2 * byteSize}); err != nil {
		t.Fatal(err)
	}
	inKey, inMem := shmCreate(t, "input_simple", 2*byteSize)
	in0, in1 := exampleInputs()
	putInt32s(inMem, in0)
	putInt32s(inMem[byteSize:], in1)
	if _, err := c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "input_data", Key: inKey, ByteSize: 2 * byteSize}); err != nil {
		t.Fatal(err)
	}
	req := &pb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: map[string]*pb.InferParameter{
				"shared_memory_region": shmParam("input_data"), "shared_memory_byte_size": i64Param(byteSize)}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: map[string]*pb.InferParameter{
				"shared_memory_region": shmParam("input_data"), "shared_memory_byte_size": i64Param(byteSize), "shared_memory_offset": i64Param(byteSize)}},
		},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{
			{Name: "OUTPUT0", Parameters: map[string]*pb.InferParameter{
				"shared_memory_region": shmParam("output_data"), "shared_memory_byte_size": i64Param(byteSize)}},
			{Name: "OUTPUT1", Parameters: map[string]*pb.InferParameter{
				"shared_memory_region": shmParam("output_data"), "shared_memory_byte_size": i64Param(byteSize), "shared_memory_offset": i64Param(byteSize)}},
		},
	}
	resp, err := c.ModelInfer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"OUTPUT0", "OUTPUT1"} {
		o := resp.GetOutputs()[i]
		if o.GetName() != name || o.GetDatatype() != "INT32" || fmt.Sprint(o.GetShape()) != "[1 16]" {
			t.Fatalf("output %d = %v", i, o)
		}
		if len(resp.GetRawOutputContents()[i]) != 0 {
			t.Errorf("%s is in shared memory but the response carries %d bytes of it", name, len(resp.GetRawOutputContents()[i]))
		}
	}
	checkSumsAndDifferences(t, outMem, in0, in1)

	st, err := c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.GetRegions(); len(got) != 2 || got["input_data"].GetKey() != inKey || got["output_data"].GetByteSize() != 2*byteSize {
		t.Fatalf("status = %v", got)
	}
	if _, err := c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	if st, err := c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{}); err != nil || len(st.GetRegions()) != 0 {
		t.Fatalf("status after unregister = %v, %v", st, err)
	}
	if reqs, infs := successCount(t, s, "simple"); reqs != 1 || infs != 1 {
		t.Errorf("the simulator counts %d requests, %d inferences; the client made 1", reqs, infs)
	}
}

// TestHTTPSimpleShmClient is simple_http_shm_client.py's sequence over
// HTTP/REST, with the bodies tritonclient.http sends (its outputs ask for
// binary_data, which set_shared_memory turns off).
func TestHTTPSimpleShmClient(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{AllowClientShm: true})
	base := "http://" + s.HTTPAddr()
	post := func(path, body string) []byte {
		t.Helper()
		code, _, b := httpDo(t, "POST", base+path, []byte(body), nil)
		if code != 200 {
			t.Fatalf("POST %s = %d %s", path, code, b)
		}
		return b
	}
	post("/v2/systemsharedmemory/unregister", "")
	post("/v2/cudasharedmemory/unregister", "")
	const byteSize = 64
	outKey, outMem := shmCreate(t, "output_simple", 2*byteSize)
	post("/v2/systemsharedmemory/region/output_data/register", fmt.Sprintf(`{"key": %q, "offset": 0, "byte_size": %d}`, outKey, 2*byteSize))
	inKey, inMem := shmCreate(t, "input_simple", 2*byteSize)
	in0, in1 := exampleInputs()
	putInt32s(inMem, in0)
	putInt32s(inMem[byteSize:], in1)
	post("/v2/systemsharedmemory/region/input_data/register", fmt.Sprintf(`{"key": %q, "offset": 0, "byte_size": %d}`, inKey, 2*byteSize))

	// json.dumps(infer_request) of tritonclient.http's _get_inference_request,
	// with its default separators; all inputs are in shared memory, so the
	// JSON is the whole body and no Inference-Header-Content-Length is sent.
	body := `{"inputs": [` +
		`{"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "parameters": {"shared_memory_region": "input_data", "shared_memory_byte_size": 64}}, ` +
		`{"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "parameters": {"shared_memory_region": "input_data", "shared_memory_byte_size": 64, "shared_memory_offset": 64}}], ` +
		`"outputs": [` +
		`{"name": "OUTPUT0", "parameters": {"binary_data": false, "shared_memory_region": "output_data", "shared_memory_byte_size": 64}}, ` +
		`{"name": "OUTPUT1", "parameters": {"binary_data": false, "shared_memory_region": "output_data", "shared_memory_byte_size": 64, "shared_memory_offset": 64}}]}`
	var resp struct {
		Outputs []struct {
			Name     string  `json:"name"`
			Datatype string  `json:"datatype"`
			Shape    []int64 `json:"shape"`
			Data     []any   `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(post("/v2/models/simple/infer", body), &resp); err != nil {
		t.Fatal(err)
	}
	// The example reads each output's datatype and shape from the
	// response (get_output), then the values from the region.
	if len(resp.Outputs) != 2 {
		t.Fatalf("outputs = %+v", resp.Outputs)
	}
	for i, name := range []string{"OUTPUT0", "OUTPUT1"} {
		o := resp.Outputs[i]
		if o.Name != name || o.Datatype != "INT32" || fmt.Sprint(o.Shape) != "[1 16]" || o.Data != nil {
			t.Fatalf("output %d = %+v", i, o)
		}
	}
	checkSumsAndDifferences(t, outMem, in0, in1)

	code, _, b := httpDo(t, "GET", base+"/v2/systemsharedmemory/status", nil, nil)
	var regions []struct {
		Name, Key string
		Offset    uint64
		ByteSize  uint64 `json:"byte_size"`
	}
	if err := json.Unmarshal(b, &regions); code != 200 || err != nil || len(regions) != 2 || regions[0].Name != "input_data" || regions[0].Key != inKey ||
		regions[1].Name != "output_data" || regions[1].Key != outKey || regions[1].ByteSize != 2*byteSize || regions[1].Offset != 0 {
		t.Fatalf("status = %d %s", code, b)
	}
	bad := strings.Replace(body, `"binary_data": false`, `"binary_data": true`, 1)
	if code, _, b := httpDo(t, "POST", base+"/v2/models/simple/infer", []byte(bad), nil); code != 400 ||
		string(b) != `{"error":"Output can't set both 'shared_memory_region' and 'binary_data'"}` {
		t.Errorf("binary data and shared memory on one output: %d %s", code, b)
	}
	post("/v2/systemsharedmemory/unregister", "")
	if code, _, b := httpDo(t, "GET", base+"/v2/systemsharedmemory/status", nil, nil); code != 200 || string(b) != "[]" {
		t.Fatalf("status after unregister = %d %s", code, b)
	}
	if reqs, infs := successCount(t, s, "simple"); reqs != 1 || infs != 1 {
		t.Errorf("the simulator counts %d requests, %d inferences; the client made 1", reqs, infs)
	}
}

// TestShmErrors: Triton's messages and codes for the ways a region or a
// tensor in one can be wrong.
func TestShmErrors(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{AllowClientShm: true})
	c, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	key, _ := shmCreate(t, "region", 128)
	reg := func(name, key string, off, size uint64) error {
		_, err := c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: name, Key: key, Offset: off, ByteSize: size})
		return err
	}
	want := func(what string, err error, code codes.Code, msg string) {
		t.Helper()
		if st, _ := status.FromError(err); st.Code() != code || st.Message() != msg {
			t.Errorf("%s: %v, want %v %q", what, err, code, msg)
		}
	}
	want("missing object", reg("r", "/no_such_region_here", 0, 64), codes.Internal, "Unable to open shared memory region: '/no_such_region_here'")
	want("too large", reg("r", key, 64, 128), codes.InvalidArgument, "failed to register shared memory region 'r': invalid args")
	want("reserved key", reg("r", "/triton_python_backend_shm_region_1", 0, 64), codes.InvalidArgument,
		"cannot register shared memory region 'r' with key '/triton_python_backend_shm_region_1' as the key contains the reserved prefix 'triton_python_backend_shm_region_'")
	if err := reg("r", key, 0, 128); err != nil {
		t.Fatal(err)
	}
	want("twice", reg("r", key, 0, 64), codes.AlreadyExists, "shared memory region 'r' already in manager")
	_, err := c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{Name: "nope"})
	want("status of unknown", err, codes.NotFound, "Unable to find system shared memory region: 'nope'")
	_, err = c.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{Name: "g", ByteSize: 64})
	want("cuda", err, codes.InvalidArgument, "failed to register CUDA shared memory region: 'g', GPUs not supported")

	infer := func(inRegion string, inSize, inOff, outSize int64, withSize bool) error {
		p := map[string]*pb.InferParameter{"shared_memory_region": shmParam(inRegion), "shared_memory_offset": i64Param(inOff)}
		if withSize {
			p["shared_memory_byte_size"] = i64Param(inSize)
		}
		_, err := c.ModelInfer(ctx, &pb.ModelInferRequest{
			ModelName: "simple",
			Inputs: []*pb.ModelInferRequest_InferInputTensor{
				{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: p},
				{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: map[string]*pb.InferParameter{
					"shared_memory_region": shmParam("r"), "shared_memory_byte_size": i64Param(64)}},
			},
			Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: map[string]*pb.InferParameter{
				"shared_memory_region": shmParam("r"), "shared_memory_byte_size": i64Param(outSize), "shared_memory_offset": i64Param(64)}}},
		})
		return err
	}
	if err := infer("r", 64, 0, 64, true); err != nil {
		t.Fatalf("a good request: %v", err)
	}
	want("unknown region", infer("nope", 64, 0, 64, true), codes.NotFound, "Unable to find shared memory region: 'nope'")
	want("no byte size", infer("r", 64, 0, 64, false), codes.InvalidArgument, "'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'INPUT0'")
	want("offset past the end", infer("r", 64, 128, 64, true), codes.InvalidArgument, "Invalid offset for shared memory region: 'r'")
	want("span past the end", infer("r", 64, 96, 64, true), codes.InvalidArgument, "Invalid offset + byte size for shared memory region: 'r'")
	want("output region too small", infer("r", 64, 0, 32, true), codes.Internal,
		"shared memory size specified with the request for output 'OUTPUT0' (32 bytes) should be at least 64 bytes to hold the results")
	if _, err := c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	want("after unregister", infer("r", 64, 0, 64, true), codes.NotFound, "Unable to find shared memory region: 'r'")
}

// TestGRPCStreamShm: a request over ModelStreamInfer with its tensors in
// shared memory reads its inputs from their region and writes its outputs
// into theirs, as a unary one does.
func TestGRPCStreamShm(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{AllowClientShm: true})
	c, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	key, mem := shmCreate(t, "stream", 256)
	if _, err := c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: key, ByteSize: 256}); err != nil {
		t.Fatal(err)
	}
	in0, in1 := exampleInputs()
	putInt32s(mem, in0)
	putInt32s(mem[64:], in1)
	at := func(off int64) map[string]*pb.InferParameter {
		return map[string]*pb.InferParameter{"shared_memory_region": shmParam("r"), "shared_memory_byte_size": i64Param(64), "shared_memory_offset": i64Param(off)}
	}
	st, err := c.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&pb.ModelInferRequest{ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: at(0)},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: at(64)}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: at(128)}, {Name: "OUTPUT1", Parameters: at(192)}},
	}); err != nil {
		t.Fatal(err)
	}
	resp, err := st.Recv()
	if err != nil || resp.GetErrorMessage() != "" {
		t.Fatalf("stream answer: %v %q", err, resp.GetErrorMessage())
	}
	checkSumsAndDifferences(t, mem[128:], in0, in1)
	_ = st.CloseSend()
}

// TestPerfAnalyzerShmSequence follows perf_analyzer's --shared-memory
// system (src/infer_data_manager_shm.cc): unregister every region, a
// region per output named after it and one per input and data step
// (NAME_STREAM_STEP), each registered whole, then requests from 4
// goroutines that reference them at offset 0, then unregister every
// region. The simulator counts the requests sent and writes the results.
func TestPerfAnalyzerShmSequence(t *testing.T) {
	s := startSim(t, ExampleRepository(), EngineOptions{AllowClientShm: true})
	c, _ := rawGRPC(t, s)
	ctx := ctxT(t)
	if _, err := c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	region := func(name string) []byte {
		key, mem := shmCreate(t, name, 64)
		if _, err := c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: name, Key: key, ByteSize: 64}); err != nil {
			t.Fatal(err)
		}
		return mem
	}
	out0, out1 := region("OUTPUT0"), region("OUTPUT1")
	in0, in1 := exampleInputs()
	putInt32s(region("INPUT0_0_0"), in0)
	putInt32s(region("INPUT1_0_0"), in1)
	ref := func(name string) map[string]*pb.InferParameter {
		return map[string]*pb.InferParameter{"shared_memory_region": shmParam(name), "shared_memory_byte_size": i64Param(64)}
	}
	req := &pb.ModelInferRequest{ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: ref("INPUT0_0_0")},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}, Parameters: ref("INPUT1_0_0")}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: ref("OUTPUT0")}, {Name: "OUTPUT1", Parameters: ref("OUTPUT1")}},
	}
	const workers, each = 4, 25
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for range each {
				if _, err := c.ModelInfer(ctx, req); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{}); err != nil {
		t.Fatal(err)
	}
	both := append(append([]byte{}, out0...), out1...)
	checkSumsAndDifferences(t, both, in0, in1)
	if reqs, _ := successCount(t, s, "simple"); reqs != workers*each {
		t.Errorf("the simulator counts %d requests, the client sent %d", reqs, workers*each)
	}
	if st, err := c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{}); err != nil || len(st.GetRegions()) != 0 {
		t.Errorf("regions left: %v, %v", st, err)
	}
}

// TestClientShmSwitch: as Triton 2.73, client shared memory is refused
// unless EngineOptions.AllowClientShm (tritontop sim --allow-client-shm)
// allows it: registering and unregistering, system or CUDA, over gRPC and
// HTTP, answer UNIMPLEMENTED (HTTP 501) with Triton's message; the status
// still answers.
func TestClientShmSwitch(t *testing.T) {
	const disabled = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable."
	key, _ := shmCreate(t, "switch", 64)
	for _, allow := range []bool{false, true} {
		s := startSim(t, ExampleRepository(), EngineOptions{AllowClientShm: allow})
		c, _ := rawGRPC(t, s)
		ctx := ctxT(t)
		base := "http://" + s.HTTPAddr()
		_, regErr := c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "g", Key: key, ByteSize: 64})
		_, unregErr := c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{Name: "g"})
		_, cudaErr := c.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{})
		_, statusErr := c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{})
		hReg, _, hRegBody := httpDo(t, "POST", base+"/v2/systemsharedmemory/region/h/register", []byte(`{"key":"`+key+`","offset":0,"byte_size":64}`), nil)
		hUnreg, _, hUnregBody := httpDo(t, "POST", base+"/v2/systemsharedmemory/unregister", nil, nil)
		hStatus, _, _ := httpDo(t, "GET", base+"/v2/systemsharedmemory/status", nil, nil)
		if statusErr != nil || hStatus != 200 {
			t.Errorf("allow %t: status: %v, HTTP %d", allow, statusErr, hStatus)
		}
		if allow {
			if regErr != nil || unregErr != nil || cudaErr != nil || hReg != 200 || hUnreg != 200 {
				t.Errorf("allowed: register %v, unregister %v, CUDA unregister %v, HTTP register %d %s, HTTP unregister %d %s",
					regErr, unregErr, cudaErr, hReg, hRegBody, hUnreg, hUnregBody)
			}
			continue
		}
		for what, err := range map[string]error{"register": regErr, "unregister": unregErr, "CUDA unregister": cudaErr} {
			if st, _ := status.FromError(err); st.Code() != codes.Unimplemented || st.Message() != disabled {
				t.Errorf("off: gRPC %s = %v", what, err)
			}
		}
		want := `{"error":"` + disabled + `"}`
		if hReg != 501 || string(hRegBody) != want || hUnreg != 501 || string(hUnregBody) != want {
			t.Errorf("off: HTTP register %d %s, unregister %d %s", hReg, hRegBody, hUnreg, hUnregBody)
		}
	}
}
