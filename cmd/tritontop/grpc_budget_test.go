package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// budgetRepository is a model taking one large variable FP32 input that
// computes for 300 ms, so that concurrent requests overlap in the server.
const budgetRepository = `{"gpus": [{"name": "sim", "memory_bytes": 1073741824}], "models": [
 {"name": "wide", "backend": "python", "max_batch_size": 0,
  "inputs": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [-1]}],
  "outputs": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [1]}],
  "instance_group": [{"count": 4, "kind": "KIND_CPU"}], "latency": {"fixed_us": 300000}, "behaviour": "zeros"}
]}`

// grpcBudgetMemory is the peak resident memory docs/limits.md promises for
// the simulator run with --grpc-budget 128MiB and --grpc-max-input-size
// 64MiB: its baseline, two 60 MB messages held (as received, as one
// contiguous copy, and decoded), with the collector's headroom.
const grpcBudgetMemory = 640 << 20

// TestSimGRPCBudgetUnderConcurrentLargeMessages runs the simulator binary
// with a gRPC budget of two messages and sends it four 60 MB infer
// requests at once, each on its own connection. Every request is served or
// refused with RESOURCE_EXHAUSTED, at least one is refused, the simulator
// stays up, and its peak resident set stays under the documented budget.
func TestSimGRPCBudgetUnderConcurrentLargeMessages(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the simulator's peak memory")
	}
	bin := buildBinary(t)
	t.Setenv("GOMEMLIMIT", "384MiB")
	repo := filepath.Join(t.TempDir(), "repo.json")
	if err := os.WriteFile(repo, []byte(budgetRepository), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, addrs, stderr := startSimCommand(t, bin, "--model-repository", repo,
		"--grpc-max-input-size", strconv.Itoa(64<<20), "--grpc-budget", strconv.Itoa(128<<20))
	base := peakRSS(t, cmd.Process.Pid)

	const elems = 15 << 20 // 60 MiB of FP32
	req := &pb.ModelInferRequest{
		ModelName:        "wide",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{elems}}},
		RawInputContents: [][]byte{make([]byte, elems*4)},
	}
	const clients = 4
	codesSeen := make([]codes.Code, clients)
	errs := make([]error, clients)
	var start, done sync.WaitGroup
	start.Add(clients)
	for i := range clients {
		done.Add(1)
		go func() {
			defer done.Done()
			conn, err := grpc.NewClient(addrs["gRPC"], grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(128<<20)))
			if err != nil {
				errs[i] = err
				start.Done()
				return
			}
			defer conn.Close()
			conn.Connect()
			start.Done()
			start.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err = pb.NewGRPCInferenceServiceClient(conn).ModelInfer(ctx, req)
			codesSeen[i] = status.Code(err)
			errs[i] = err
		}()
	}
	done.Wait()
	refused := 0
	for i, c := range codesSeen {
		switch c {
		case codes.OK:
		case codes.ResourceExhausted:
			refused++
		default:
			t.Fatalf("request %d: %v; want OK or RESOURCE_EXHAUSTED (simulator stderr: %s)", i, errs[i], stderr.String())
		}
	}
	if refused == 0 {
		t.Errorf("all %d concurrent 60 MB requests were admitted under a budget of two", clients)
	}
	checkLive(t, addrs["gRPC"], triton.Options{Protocol: "grpc"})
	peak := peakRSS(t, cmd.Process.Pid)
	t.Logf("codes %v; simulator peak RSS %d MiB at start, %d MiB after (budget %d MiB)", codesSeen, base>>20, peak>>20, grpcBudgetMemory>>20)
	if peak > grpcBudgetMemory {
		t.Fatalf("simulator peak RSS %d MiB, over its documented budget of %d MiB", peak>>20, grpcBudgetMemory>>20)
	}
}
