//go:build linux

package sim

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tritontop/tritontop/internal/testenv"
	"github.com/tritontop/tritontop/triton/pb"
)

// budgetChildEnv, set in the environment of this test binary run again,
// makes TestSimBudgetProcess serve under an address-space cap of that many
// bytes.
const budgetChildEnv = "TRITONTOP_SIM_BUDGET_CHILD"

// The hostile load of TestStressSimMemoryBudgetUnderAddressSpaceCap.
const (
	budgetCap       = 6 << 30   // the simulator's address space, as in the report
	budgetMessage   = 400 << 20 // each gRPC message's tensor
	budgetMessages  = 4         // sent at once, each on its own connection
	budgetJSONElems = 25 << 20  // "0," each: a 50 MB JSON body
	// budgetJSONInputLimit is the simulator's --http-max-input-size: room
	// for the JSON body's tensor (4 bytes per element).
	budgetJSONInputLimit = 4*budgetJSONElems + 1<<20
)

// budgetRepository is a model taking one large variable FP32 input and
// answering one number after computing for 1.5 s, so that the requests
// sent at once overlap in the server.
func budgetRepository() Repository {
	return Repository{
		GPUs: []GPUSpec{{Name: "sim", MemoryBytes: 1 << 30}},
		Models: []ModelSpec{{
			Name: "wide", Backend: "python",
			Inputs:         []TensorSpec{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{-1}}},
			Outputs:        []TensorSpec{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{1}}},
			InstanceGroups: []InstanceGroupSpec{{Count: 8, Kind: "KIND_CPU"}},
			Latency:        LatencySpec{FixedUS: 1.5e6},
			Behaviour:      BehaviourZeros,
		}},
	}
}

// TestSimBudgetProcess is the simulator process of
// TestStressSimMemoryBudgetUnderAddressSpaceCap: it caps its own address
// space (setrlimit RLIMIT_AS) and serves with the default memory budget,
// which it derives from that cap, and the Go memory limit the command sets,
// until its stdin closes; a line on stdin asks for its budget's counters.
func TestSimBudgetProcess(t *testing.T) {
	capBytes, err := strconv.ParseUint(os.Getenv(budgetChildEnv), 10, 64)
	if err != nil {
		t.Skip("the simulator process of TestStressSimMemoryBudgetUnderAddressSpaceCap, run only by it")
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: capBytes, Max: capBytes}); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
	// The JSON body's tensor decodes to 100 MB, past Triton's default
	// --http-max-input-size (64 MB) for one JSON input: the limit is
	// raised so that the body is decoded, under the budget.
	s, err := Start(context.Background(), Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: budgetRepository(), SetGoMemoryLimit: true, HTTP: HTTPLimits{MaxInputSize: budgetJSONInputLimit}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("sim %s %s %d\n", s.GRPCAddr(), s.HTTPAddr(), s.MemoryBudget())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		peak, refused := s.MemoryPeak()
		fmt.Printf("stats %d %d %d\n", peak, refused, s.MemoryHeld())
	}
}

// budgetChild is the simulator process and its pipes.
type budgetChild struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	lines          chan string
	grpc, http     string
	budget         int64
	startedBaseRSS int64
}

// plainTestBinary is this package's test binary built without the race
// detector, whose runtime maps terabytes of shadow memory that no
// address-space cap fits: under -race the simulator process runs that one.
func plainTestBinary(t *testing.T) string {
	t.Helper()
	if !testenv.Race {
		return os.Args[0]
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("under -race the simulator process is this package's tests built without it, and there is no go command")
	}
	bin := filepath.Join(t.TempDir(), "sim.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	return bin
}

// startBudgetChild runs TestSimBudgetProcess under an address-space cap of
// capBytes. The process dies with the test (Pdeathsig) and ends with it.
func startBudgetChild(t *testing.T, capBytes int64) *budgetChild {
	t.Helper()
	cmd := exec.Command(plainTestBinary(t), "-test.run=^TestSimBudgetProcess$", "-test.count=1", "-test.timeout=10m")
	env := []string{budgetChildEnv + "=" + strconv.FormatInt(capBytes, 10)}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOMEMLIMIT=") && !strings.HasPrefix(e, "GOGC=") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the simulator process: %v", err)
	}
	c := &budgetChild{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	f := strings.Fields(c.line(t, "sim "))
	c.grpc, c.http = f[1], f[2]
	c.budget, _ = strconv.ParseInt(f[3], 10, 64)
	return c
}

// line waits for the child's next line starting with prefix.
func (c *budgetChild) line(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("the simulator process ended (%v) before saying %q", c.cmd.ProcessState, prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("the simulator process did not say %q within 60 s", prefix)
		}
	}
}

// stats asks the child for its budget's peak, refusals and bytes held.
func (c *budgetChild) stats(t *testing.T) (peak, refused, held int64) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, "stats\n"); err != nil {
		t.Fatalf("the simulator process is gone: %v", err)
	}
	f := strings.Fields(c.line(t, "stats "))
	peak, _ = strconv.ParseInt(f[1], 10, 64)
	refused, _ = strconv.ParseInt(f[2], 10, 64)
	held, _ = strconv.ParseInt(f[3], 10, 64)
	return peak, refused, held
}

// procStatusOf reads a process's /proc status field in bytes.
func procStatusOf(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read the simulator's status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// rawCodec sends a message already encoded, so that the test's four
// 400 MB requests share one buffer, and takes answers as bytes.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

// wideInferRequest is a ModelInfer request for model wide with n zero
// FP32 elements, encoded in one buffer.
func wideInferRequest(n int) []byte {
	in := protowire.AppendTag(nil, 1, protowire.BytesType)
	in = protowire.AppendString(in, "INPUT0")
	in = protowire.AppendTag(in, 2, protowire.BytesType)
	in = protowire.AppendString(in, "FP32")
	in = protowire.AppendTag(in, 3, protowire.BytesType)
	in = protowire.AppendBytes(in, protowire.AppendVarint(nil, uint64(n)))
	b := make([]byte, 0, 4*n+len(in)+64)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "wide")
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b = protowire.AppendBytes(b, in)
	b = protowire.AppendTag(b, 7, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(4*n))
	return b[:len(b)+4*n] // the zeros make the tensor
}

// budgetAnswer is one request's answer: its gRPC code (or HTTP status)
// and message.
type budgetAnswer struct {
	code   codes.Code
	status int
	msg    string
}

// budgetJSONBody is the 50 MB JSON infer body: budgetJSONElems zeros.
func budgetJSONBody() []byte {
	var body bytes.Buffer
	body.Grow(2*budgetJSONElems + 128)
	fmt.Fprintf(&body, `{"inputs":[{"name":"INPUT0","shape":[%d],"datatype":"FP32","data":[0`, budgetJSONElems)
	for range budgetJSONElems - 1 {
		body.WriteString(",0")
	}
	body.WriteString("]}]}")
	return body.Bytes()
}

// sendBudgetLoad sends the child the four 400 MB gRPC requests, each on
// its own connection, and the 50 MB JSON body, all at once, and returns
// their answers (the JSON body's last).
func sendBudgetLoad(c *budgetChild) []budgetAnswer {
	msg, body := wideInferRequest(budgetMessage/4), budgetJSONBody()
	answers := make([]budgetAnswer, budgetMessages+1)
	var start, done sync.WaitGroup
	start.Add(budgetMessages + 1)
	done.Add(budgetMessages + 1)
	for i := range budgetMessages {
		go func() {
			defer done.Done()
			conn, err := grpc.NewClient(c.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(1<<31-1), grpc.ForceCodecV2(rawCodec{})))
			start.Done()
			if err != nil {
				answers[i] = budgetAnswer{code: codes.Unknown, msg: err.Error()}
				return
			}
			defer conn.Close()
			conn.Connect()
			start.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var out []byte
			err = conn.Invoke(ctx, pb.GRPCInferenceService_ModelInfer_FullMethodName, msg, &out)
			answers[i] = budgetAnswer{code: status.Code(err), msg: status.Convert(err).Message()}
		}()
	}
	go func() {
		defer done.Done()
		start.Done()
		start.Wait()
		resp, err := (&http.Client{Timeout: 2 * time.Minute}).Post("http://"+c.http+"/v2/models/wide/infer", "application/json", bytes.NewReader(body))
		if err != nil {
			answers[budgetMessages] = budgetAnswer{msg: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		answers[budgetMessages] = budgetAnswer{status: resp.StatusCode, msg: string(b)}
	}()
	done.Wait()
	return answers
}

// checkBudgetAnswers fails the test unless each gRPC request was served or
// refused with the budget's reason, and the JSON body served or answered
// 503 with it; it returns how many gRPC requests were served and refused.
func checkBudgetAnswers(t *testing.T, answers []budgetAnswer) (served, refused int) {
	t.Helper()
	for i, a := range answers[:budgetMessages] {
		switch {
		case a.code == codes.OK:
			served++
		case a.code == codes.ResourceExhausted && strings.Contains(a.msg, "memory budget") && strings.Contains(a.msg, "--memory-budget"):
			refused++
		default:
			t.Errorf("gRPC request %d: %v %q; want OK, or RESOURCE_EXHAUSTED with the memory budget's reason", i, a.code, a.msg)
		}
	}
	switch h := answers[budgetMessages]; {
	case h.status == http.StatusOK:
	case h.status == http.StatusServiceUnavailable && strings.Contains(h.msg, "memory budget"):
	default:
		t.Errorf("50 MB JSON body: %d %q; want 200, or 503 with the memory budget's reason", h.status, h.msg)
	}
	return served, refused
}

// TestStressSimMemoryBudgetUnderAddressSpaceCap runs the simulator in a
// process of its own under a 6 GiB address-space cap, with the default
// memory budget it derives from that cap, and sends it four 400 MB gRPC
// infer requests at once (each on its own connection, each under the
// per-message limit) and a 50 MB JSON body. Each request is served or
// refused with the budget's answer (gRPC RESOURCE_EXHAUSTED, HTTP 503),
// the process lives and serves on, its reservations never pass the
// budget, and its peak resident memory (VmHWM) stays within the budget
// plus MemoryBudgetOverhead. It moves over a gigabyte through loopback and
// decodes 50 MB of JSON: 15 to 45 s on a busy 2-core host, so it runs in
// the stress pass.
func TestStressSimMemoryBudgetUnderAddressSpaceCap(t *testing.T) {
	testenv.Stress(t) // it moves over a gigabyte
	began := time.Now()
	c := startBudgetChild(t, budgetCap)
	pid := c.cmd.Process.Pid
	started := time.Since(began)
	base := procStatusOf(t, pid, "VmHWM")

	sent := time.Now()
	answers := sendBudgetLoad(c)
	loaded := time.Since(sent)
	served, refused := checkBudgetAnswers(t, answers)
	if cost := 3 * int64(budgetMessage); c.budget >= cost && served == 0 {
		t.Errorf("no 400 MB request was served under a budget of %d bytes, room for one", c.budget)
	} else if c.budget < budgetMessages*cost && refused == 0 {
		t.Errorf("all %d 400 MB requests were admitted under a budget of %d bytes", budgetMessages, c.budget)
	}

	// The process lives, and serves.
	conn, err := grpc.NewClient(c.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := pb.NewGRPCInferenceServiceClient(conn).ModelInfer(ctx, wideRequest(4)); err != nil {
		t.Fatalf("a small request after the load: %v", err)
	}
	peak, budgetRefusals, _ := c.stats(t)
	hwm := procStatusOf(t, pid, "VmHWM")
	t.Logf("simulator started in %s, load answered in %s", started.Round(time.Millisecond), loaded.Round(time.Millisecond))
	t.Logf("budget %d MiB (default under a %d GiB address-space cap); gRPC %d served, %d refused; JSON body %d; reservations peaked at %d MiB, %d refused; VmHWM %d MiB at start, %d MiB after (limit %d MiB)",
		c.budget>>20, budgetCap>>30, served, refused, answers[budgetMessages].status, peak>>20, budgetRefusals, base>>20, hwm>>20, (c.budget+MemoryBudgetOverhead)>>20)
	if peak > c.budget {
		t.Errorf("reservations peaked at %d bytes, over the budget of %d", peak, c.budget)
	}
	if hwm > c.budget+MemoryBudgetOverhead {
		t.Errorf("peak resident memory %d MiB, over the budget plus overhead, %d MiB", hwm>>20, (c.budget+MemoryBudgetOverhead)>>20)
	}
}
