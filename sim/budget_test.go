package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// startBudgetSim serves budgetRepository's model, with compute latency
// fixedUS, under a memory budget of budget bytes.
func startBudgetSim(t *testing.T, budget int64, fixedUS float64) *Server {
	t.Helper()
	repo := budgetRepository()
	repo.Models[0].Latency.FixedUS = fixedUS
	s, err := Start(context.Background(), Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: repo, MemoryBudget: budget, Engine: EngineOptions{MetricsInterval: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func budgetClient(t *testing.T, s *Server) pb.GRPCInferenceServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewGRPCInferenceServiceClient(conn)
}

// wideRequest is a ModelInfer request of n FP32 elements for model wide.
func wideRequest(n int) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{ModelName: "wide",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{int64(n)}}},
		RawInputContents: [][]byte{make([]byte, 4*n)}}
}

// heldReturnsToZero waits until the server holds nothing for requests.
func heldReturnsToZero(t *testing.T, s *Server) {
	t.Helper()
	waitFor(t, "the memory budget to be all given back", func() bool { return s.MemoryHeld() == 0 })
}

// TestGRPCBudgetAnswers: a message larger than the whole budget, one that
// does not fit while another is held, a stream's message that does not
// fit, and a protobuf message small on the wire that decodes into far more
// than the budget: each is answered RESOURCE_EXHAUSTED with the budget's
// reason and what to do, everything is given back, and the server serves
// on.
func TestGRPCBudgetAnswers(t *testing.T) {
	t.Parallel()
	const budget = 8 << 20
	s := startBudgetSim(t, budget, 300000)
	c := budgetClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	check := func(what string, err error, want string) {
		t.Helper()
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), want) ||
			!strings.Contains(status.Convert(err).Message(), "--memory-budget") {
			t.Errorf("%s: %v; want RESOURCE_EXHAUSTED %q and the flag", what, err, want)
		}
	}

	_, err := c.ModelInfer(ctx, wideRequest(1<<20)) // 4 MiB: 12 MiB to receive and decode
	check("a 4 MiB message under an 8 MiB budget", err, "more than the whole memory budget of 8388608 bytes")

	held := make(chan error, 1)
	go func() { _, err := c.ModelInfer(ctx, wideRequest(512<<10)); held <- err }() // 6 MiB for 300 ms
	waitFor(t, "the first request to be held", func() bool { return s.MemoryHeld() >= 6<<20 })
	_, err = c.ModelInfer(ctx, wideRequest(256<<10))
	check("a 1 MiB message while 6 MiB are held", err, "Server busy")
	if err := <-held; err != nil {
		t.Errorf("the request that fit: %v", err)
	}

	st, err := c.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(wideRequest(16)); err != nil {
		t.Fatal(err)
	}
	if r, err := st.Recv(); err != nil || r.GetErrorMessage() != "" {
		t.Fatalf("a small streamed request: %v %q", err, r.GetErrorMessage())
	}
	_ = st.Send(wideRequest(1 << 20))
	_, err = st.Recv()
	check("a streamed 4 MiB message", err, "more than the whole memory budget")

	// 300000 empty inputs: 600 KB on the wire, tens of megabytes decoded.
	var bomb []byte
	bomb = protowire.AppendTag(bomb, 1, protowire.BytesType)
	bomb = protowire.AppendString(bomb, "wide")
	for range 300000 {
		bomb = protowire.AppendTag(bomb, 5, protowire.BytesType)
		bomb = protowire.AppendVarint(bomb, 0)
	}
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out []byte
	err = conn.Invoke(ctx, pb.GRPCInferenceService_ModelInfer_FullMethodName, bomb, &out, grpc.ForceCodecV2(rawCodec{}))
	check("300000 empty inputs", err, "memory budget")

	heldReturnsToZero(t, s)
	if _, err := c.ModelInfer(ctx, wideRequest(16)); err != nil {
		t.Errorf("a small request after the refusals: %v", err)
	}
	heldReturnsToZero(t, s)
	if _, refused := s.MemoryPeak(); refused < 4 {
		t.Errorf("%d reservations refused; want at least 4", refused)
	}
}

// TestHTTPBudgetAnswers: over HTTP the budget's refusal is 503 (Triton's
// status when it cannot take a request now) with its reason, for a body
// larger than the budget and for a JSON body whose values would decode
// into more than the budget, and the server serves on.
func TestHTTPBudgetAnswers(t *testing.T) {
	t.Parallel()
	s := startBudgetSim(t, 8<<20, 10)
	post := func(body []byte) (int, string) {
		t.Helper()
		resp, err := http.Post("http://"+s.HTTPAddr()+"/v2/models/wide/infer", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"a 9 MB binary body", append([]byte(`{"inputs":[{"name":"INPUT0","shape":[2250000],"datatype":"FP32","parameters":{"binary_data_size":9000000}}]}`), make([]byte, 9000000)...)},
		{"1 MB of empty inputs", []byte(`{"inputs":[{}` + strings.Repeat(`,{}`, 1<<18) + `]}`)},
		{"1 MB of parameters", []byte(`{"parameters":{"a":0` + strings.Repeat(`,"a":0`, 1<<17) + `},"inputs":[]}`)},
	} {
		code, body := post(tc.body)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "memory budget") || !strings.Contains(body, "--memory-budget") {
			t.Errorf("%s: %d %s; want 503 with the budget's reason", tc.name, code, body)
		}
	}
	heldReturnsToZero(t, s)
	if code, body := post([]byte(`{"inputs":[{"name":"INPUT0","shape":[4],"datatype":"FP32","data":[1,2,3,4]}]}`)); code != http.StatusOK {
		t.Errorf("a small request after the refusals: %d %s", code, body)
	}
	heldReturnsToZero(t, s)
}

// TestMemoryBudgetDefault: the default is half of the smallest limit less
// the overhead, and never below the least budget.
func TestMemoryBudgetDefault(t *testing.T) {
	for _, tc := range []struct {
		limits []MemoryLimit
		want   int64
		says   string
	}{
		{[]MemoryLimit{{6 << 30, "the address space RLIMIT_AS leaves"}, {20 << 30, "the memory available"}}, (6<<30 - MemoryBudgetOverhead) / 2, "half of the address space RLIMIT_AS leaves (6.0 GiB) once 256.0 MiB is set aside"},
		{[]MemoryLimit{{20 << 30, "the memory available"}, {2 << 30, "the cgroup memory limit"}}, (2<<30 - MemoryBudgetOverhead) / 2, "the cgroup memory limit"},
		{[]MemoryLimit{{100 << 20, "the cgroup memory limit"}}, MinMemoryBudget, "100.0 MiB"},
		{nil, (fallbackMemoryLimit - MemoryBudgetOverhead) / 2, "no limit could be read"},
	} {
		got, says := defaultMemoryBudget(tc.limits)
		if got != tc.want || !strings.Contains(says, tc.says) {
			t.Errorf("%v: %d %q; want %d, saying %q", tc.limits, got, says, tc.want, tc.says)
		}
	}
	b, says := DefaultMemoryBudget()
	if b < MinMemoryBudget || says == "" {
		t.Errorf("this host's default: %d %q", b, says)
	}
	t.Logf("this process's default memory budget: %d bytes (%s), %s", b, FormatBytes(b), says)
}

// TestMemoryBudgetFlag: bytes with or without a unit; the old names set
// the same budget and may repeat it, not contradict it; values no budget
// can take are refused naming the flag.
func TestMemoryBudgetFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string // name=value
		want int64
		err  string
	}{
		{[]string{"memory-budget=4GiB"}, 4 << 30, ""},
		{[]string{"memory-budget=1536M"}, 1536 << 20, ""},
		{[]string{"grpc-budget=134217728"}, 128 << 20, ""},
		{[]string{"http-max-buffered-bytes=2GiB", "memory-budget=2GiB"}, 2 << 30, ""},
		{[]string{"memory-budget=0"}, 0, ""},
		{[]string{"grpc-budget=1GiB", "memory-budget=2GiB"}, 0, "both set the memory budget"},
		{[]string{"memory-budget=1000"}, 0, "--memory-budget 1000: 1000 bytes is below the least memory budget"},
		{[]string{"memory-budget=-1"}, 0, "not a byte count"},
		{[]string{"memory-budget=lots"}, 0, "not a byte count"},
		{[]string{"memory-budget=99999999TiB"}, 0, "too large"},
	} {
		var f MemoryBudgetFlag
		var err error
		for _, a := range tc.args {
			name, v, _ := strings.Cut(a, "=")
			if err = f.Name(name).Set(v); err != nil {
				break
			}
		}
		if err == nil {
			err = f.Check()
		}
		switch {
		case tc.err == "" && (err != nil || f.Bytes != tc.want):
			t.Errorf("%v: %d, %v; want %d", tc.args, f.Bytes, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: %v; want an error saying %q", tc.args, err, tc.err)
		}
	}
}

// TestJSONCounts counts values and keys, and the bytes of "data" arrays
// apart when asked.
func TestJSONCounts(t *testing.T) {
	for _, tc := range []struct {
		in           string
		skip         bool
		values, data int64
	}{
		{`{}`, false, 1, 0},
		{`{"a":1,"b":[true,null,"x"]}`, false, 8, 0},
		{`{"inputs":[{"name":"x","data":[1,2,[3]]}]}`, true, 8, 9},
		{`{"inputs":[{"name":"x","data":[1,2,[3]]}]}`, false, 12, 0},
		{`{"data" : ["]",1], "k":"data", "v":[1]}`, true, 8, 7},
		{`["esc\"aped", -1.5e3]`, false, 3, 0},
	} {
		v, d := jsonCounts([]byte(tc.in), tc.skip)
		if v != tc.values || d != tc.data {
			t.Errorf("jsonCounts(%s, %v) = %d, %d; want %d, %d", tc.in, tc.skip, v, d, tc.values, tc.data)
		}
	}
}

// ExampleFormatBytes shows the unit the messages use.
func ExampleFormatBytes() {
	fmt.Println(FormatBytes(1536<<20), FormatBytes(900))
	// Output: 1.5 GiB 900 B
}

// allocated is the bytes f allocates: the least of three runs, so that
// what other goroutines allocate meanwhile counts as little as it can.
func allocated(f func()) int64 {
	least := int64(math.MaxInt64)
	for range 3 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		least = min(least, int64(b.TotalAlloc-a.TotalAlloc))
	}
	return least
}

// TestDecodedCostBoundsAllocation: what the codec reserves before decoding
// a ModelInfer request is at least what decoding it allocates, for
// messages whose Go form is many times their wire size.
func TestDecodedCostBoundsAllocation(t *testing.T) {
	costs := &protoCosts{}
	md := (&pb.ModelInferRequest{}).ProtoReflect().Descriptor()
	repeat := func(n int, field protowire.Number, v []byte) []byte {
		var b []byte
		for range n {
			b = protowire.AppendTag(b, field, protowire.BytesType)
			b = protowire.AppendBytes(b, v)
		}
		return b
	}
	param := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("k"))
	param = protowire.AppendTag(param, 2, protowire.BytesType)
	param = protowire.AppendBytes(param, protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 7))
	packed := func(field protowire.Number, n int) []byte {
		var run []byte
		for range n {
			run = protowire.AppendVarint(run, 1)
		}
		contents := protowire.AppendBytes(protowire.AppendTag(nil, field, protowire.BytesType), run)
		in := protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), contents)
		return protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), in)
	}
	var shape []byte
	for range 1 << 18 {
		shape = protowire.AppendVarint(shape, 1)
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty inputs", repeat(1<<17, 5, nil)},
		{"empty outputs", repeat(1<<17, 6, nil)},
		{"parameters", repeat(1<<15, 4, param)},
		{"a long shape", protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), shape))},
		{"int64 contents", packed(3, 1<<18)},
		{"bool contents", packed(1, 1<<18)},
		{"small raw contents", repeat(1<<16, 7, []byte("ab"))},
		{"one large raw content", repeat(1, 7, make([]byte, 8<<20))},
	} {
		cost := costs.decodedCost(md, tc.b)
		got := allocated(func() {
			var m pb.ModelInferRequest
			if err := proto.Unmarshal(tc.b, &m); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		})
		t.Logf("%s: %d wire bytes, %d allocated, %d reserved", tc.name, len(tc.b), got, cost)
		if cost < got {
			t.Errorf("%s: reserved %d bytes to decode, which allocated %d", tc.name, cost, got)
		}
		if cost > 5*got+4096 {
			t.Errorf("%s: reserved %d bytes to decode, which allocated only %d", tc.name, cost, got)
		}
	}
}

// TestJSONRequestCostBoundsAllocation: what an HTTP infer request's JSON
// reserves (the strings copied out of it, its values, its tensors) is at
// least what parsing it allocates, for bodies whose Go form is many times
// their text. The body itself is reserved as it is read, apart; the
// document is read in place and tensor elements make no garbage.
func TestJSONRequestCostBoundsAllocation(t *testing.T) {
	var inputs, outputs strings.Builder
	for i := range 1 << 14 {
		if i > 0 {
			inputs.WriteByte(',')
			outputs.WriteByte(',')
		}
		fmt.Fprintf(&inputs, `{"name":"i%d","datatype":"BOOL","shape":[0],"data":[]}`, i)
		fmt.Fprintf(&outputs, `{"name":"o%d","parameters":{"binary_data":true}}`, i)
	}
	for _, tc := range []struct {
		name string
		body string
	}{
		{"empty inputs", `{"inputs":[{}` + strings.Repeat(`,{}`, 1<<16) + `]}`},
		{"parameters", `{"parameters":{"a":0` + strings.Repeat(`,"a":0`, 1<<15) + `},"inputs":[]}`},
		{"a long shape", `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1` + strings.Repeat(`,1`, 1<<17) + `]}]}`},
		{"outputs", `{"inputs":[],"outputs":[{"name":"a","parameters":{"binary_data":true}}` + strings.Repeat(`,{"name":"a"}`, 1<<14) + `]}`},
		{"distinct inputs", `{"inputs":[` + inputs.String() + `]}`},
		{"distinct outputs", `{"inputs":[],"outputs":[` + outputs.String() + `]}`},
		{"FP32 data", `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[262144],"data":[0` + strings.Repeat(`,0`, 1<<18-1) + `]}]}`},
		{"INT64 data", `{"inputs":[{"name":"INPUT0","datatype":"INT64","shape":[262144],"data":[0` + strings.Repeat(`,0`, 1<<18-1) + `]}]}`},
		{"BYTES data", `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[131072],"data":[""` + strings.Repeat(`,""`, 1<<17-1) + `]}]}`},
	} {
		var hold *budgetHold
		body := []byte(tc.body) // the body, reserved as it is read (readBody)
		got := allocated(func() {
			hold = newBudgetHold(newMemBudget(1 << 40))
			_, _, _ = parseInferRequest(body, nil, "wide", "", DefaultHTTPMaxInputSize, hold)
		})
		t.Logf("%s: %d bytes of JSON, %d allocated, %d reserved", tc.name, len(tc.body), got, hold.Held())
		if hold.Held() < got {
			t.Errorf("%s: reserved %d bytes to parse, which allocated %d", tc.name, hold.Held(), got)
		}
	}
}

// TestJSONNestingIsReserved: checking a JSON body holds a byte per level
// of nesting (rapidjson's parser keeps its state per open container),
// reserved before it is checked, so that a body of a million '[' is
// refused by a small budget and costs what it says under a large one.
func TestJSONNestingIsReserved(t *testing.T) {
	deep := bytes.Repeat([]byte("["), 1<<20)
	hold := newBudgetHold(newMemBudget(1 << 40))
	if _, err := parseBody(deep, hold); err == nil || !strings.Contains(err.Error(), "failed to parse the request JSON buffer") {
		t.Errorf("a million '[': %v; want rapidjson's error", err)
	}
	if hold.Held() < 1<<20 {
		t.Errorf("a million '[' reserved %d bytes; want at least a byte per level", hold.Held())
	}
	small := newBudgetHold(newMemBudget(1 << 19))
	_, err := parseBody(deep, small)
	if c := status.Code(grpcError(err)); c != codes.ResourceExhausted {
		t.Errorf("a million '[' under a 512 KiB budget: %v (%v); want RESOURCE_EXHAUSTED", c, err)
	}
	flat := newBudgetHold(newMemBudget(1 << 19))
	if _, err := parseBody([]byte(`{"a":[1,2,{"b":"[[[["}]}`), flat); err != nil || flat.Held() != 3 {
		t.Errorf("three levels: %v, %d bytes held; want 3", err, flat.Held())
	}
}
