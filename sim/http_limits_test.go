package sim

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
)

// startSimLimits serves the test repository with the given HTTP limits.
func startSimLimits(t *testing.T, limits HTTPLimits, grpcMax int) (*Server, *httpHandler) {
	t.Helper()
	return startSimBudget(t, limits, grpcMax, 0)
}

// startSimBudget is startSimLimits with a memory budget (0: the default).
func startSimBudget(t *testing.T, limits HTTPLimits, grpcMax int, budget int64) (*Server, *httpHandler) {
	t.Helper()
	s, err := Start(context.Background(), Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: testRepository(), Engine: EngineOptions{MetricsInterval: 100 * time.Millisecond},
		HTTP: limits, GRPCMaxInputSize: grpcMax, MemoryBudget: budget,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, s.http.Handler.(*httpHandler)
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// waitClosed reads from conn until the server closes it and returns what
// it sent and how long after start the close came; it fails the test if
// the connection is still open at limit.
func waitClosed(t *testing.T, conn net.Conn, start time.Time, limit time.Duration) ([]byte, time.Duration) {
	t.Helper()
	_ = conn.SetReadDeadline(start.Add(limit))
	got, err := io.ReadAll(conn)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection still open %s after start (got %q)", limit, got)
		}
		// A reset after the server's close is a close too.
	}
	return got, time.Since(start)
}

// budgetReturnsToZero waits for every reservation to be released.
func budgetReturnsToZero(t *testing.T, h *httpHandler) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.budget.used.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still reserved", h.budget.used.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHTTPSlowlorisHeadersAreCutOff dribbles a request's headers a byte at
// a time: the server closes the connection once ReadHeaderTimeout has
// passed, without serving the request.
func TestHTTPSlowlorisHeadersAreCutOff(t *testing.T) {
	const timeout = 500 * time.Millisecond
	s, _ := startSimLimits(t, HTTPLimits{ReadHeaderTimeout: timeout}, 0)
	// Before the dial: the server's timer may start before Dial returns.
	start := time.Now()
	conn, err := net.Dial("tcp", s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stop := make(chan struct{})
	var dribbled atomic.Int64
	go func() {
		msg := "POST /v2/models/nobatch/infer HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Slow: y\r\n", 1000)
		for i := 0; i < len(msg); i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{msg[i]}); err != nil {
				return
			}
			dribbled.Add(1)
		}
	}()
	defer close(stop)
	got, took := waitClosed(t, conn, start, timeout+5*time.Second)
	// net/http may say 400 as it hangs up; it never runs the handler.
	if len(got) != 0 && (!bytes.HasPrefix(got, []byte("HTTP/1.1 400")) || !bytes.Contains(got, []byte("Connection: close"))) {
		t.Errorf("answer to a request whose headers never ended: %q", got)
	}
	if took < timeout {
		t.Errorf("connection closed after %s, before the %s header timeout", took, timeout)
	}
	if dribbled.Load() == 0 {
		t.Fatal("the client sent nothing: the test proves nothing")
	}
	t.Logf("closed %s after the first byte, %d header bytes dribbled", took, dribbled.Load())
}

// TestHTTPHalfSentBodyIsFreed declares a 64 MB body, sends half and stalls:
// once ReadTimeout has passed the server answers 400, closes the
// connection, releases the bytes it reserved, and the buffer is garbage.
func TestHTTPHalfSentBodyIsFreed(t *testing.T) {
	const timeout = 2 * time.Second
	s, h := startSimLimits(t, HTTPLimits{ReadTimeout: timeout}, 0)
	before := heapInUse()

	conn, err := net.Dial("tcp", s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /v2/models/nobatch/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", DefaultHTTPMaxInputSize)
	half := make([]byte, DefaultHTTPMaxInputSize/2)
	if _, err := conn.Write(half); err != nil {
		t.Fatal(err)
	}
	half = nil
	// While the client stalls, the server holds what it received.
	deadline := time.Now().Add(timeout)
	for h.budget.used.Load() < DefaultHTTPMaxInputSize/2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	held := h.budget.used.Load()
	if held < DefaultHTTPMaxInputSize/2 {
		t.Fatalf("server reserved %d bytes for a body it has half of", held)
	}

	got, took := waitClosed(t, conn, start, timeout+5*time.Second)
	if !bytes.HasPrefix(got, []byte("HTTP/1.1 400")) || !bytes.Contains(got, []byte("read timeout")) {
		t.Errorf("answer to a stalled body: %q", got)
	}
	budgetReturnsToZero(t, h)
	after := heapInUse()
	// The body buffer is 32 MiB or more: what is left over must be far
	// less, or the buffer is still referenced.
	if after > before+8<<20 {
		t.Errorf("heap in use %d MiB before the request, %d MiB after it was dropped", before>>20, after>>20)
	}
	t.Logf("held %d MiB while stalled; closed %s after the headers; heap %d → %d MiB", held>>20, took, before>>20, after>>20)
}

// TestHTTPBufferedBytesAreCapped sends many large bodies at once that
// together pass the memory budget, each stalled one byte short of its end:
// the reservations never pass the cap, the requests over it get 503 at
// once, the heap stays bounded, and once the stalled ones time out
// everything is released and a normal request passes.
func TestHTTPBufferedBytesAreCapped(t *testing.T) {
	const (
		bodySize = 16 << 20
		capBytes = 48 << 20
		clients  = 24
		timeout  = 3 * time.Second
	)
	s, h := startSimBudget(t, HTTPLimits{MaxInputSize: bodySize, ReadTimeout: timeout}, 0, capBytes)
	payload := make([]byte, bodySize-1) // shared by the clients, and counted in the baseline
	before := heapInUse()

	var peakReserved, peakHeap atomic.Int64
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if u := h.budget.used.Load(); u > peakReserved.Load() {
				peakReserved.Store(u)
			}
			runtime.ReadMemStats(&m)
			if int64(m.HeapInuse) > peakHeap.Load() {
				peakHeap.Store(int64(m.HeapInuse))
			}
		}
	}()

	type outcome struct {
		status string
		took   time.Duration
	}
	results := make(chan outcome, clients)
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", s.HTTPAddr())
			if err != nil {
				results <- outcome{status: err.Error()}
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v2/models/nobatch/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", bodySize)
			go func() { _, _ = conn.Write(payload) }() // a refused client's write fails: ignore it
			_ = conn.SetReadDeadline(time.Now().Add(timeout + 10*time.Second))
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil {
				results <- outcome{status: "no answer: " + err.Error(), took: time.Since(start)}
				return
			}
			results <- outcome{status: strings.TrimSpace(line), took: time.Since(start)}
		}()
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	close(results)

	var busy, timedOut int
	for r := range results {
		switch {
		case strings.HasPrefix(r.status, "HTTP/1.1 503"):
			busy++
			if r.took >= timeout {
				t.Errorf("a request over the cap waited %s for its 503", r.took)
			}
		case strings.HasPrefix(r.status, "HTTP/1.1 400"):
			timedOut++
		default:
			t.Errorf("unexpected answer %q", r.status)
		}
	}
	if max := capBytes / bodySize; timedOut > max {
		t.Errorf("%d bodies of %d MiB were held at once under a %d MiB cap", timedOut, bodySize>>20, capBytes>>20)
	}
	if busy < clients-capBytes/bodySize {
		t.Errorf("only %d of %d requests were refused", busy, clients)
	}
	if p := peakReserved.Load(); p > capBytes {
		t.Errorf("reserved %d bytes at the peak, over the %d cap", p, capBytes)
	}
	// Unbounded, the bodies would take clients × 16 MiB = 384 MiB. Bounded,
	// the live heap is at most the baseline plus the cap; the garbage of
	// grown and refused buffers comes on top until the collector runs,
	// which it does (GOGC=100) before the heap doubles its live size. So
	// the margin is twice baseline plus cap, and 32 MiB for the runtime's
	// own spans and the connections' buffers (runs peaked at 105-117 MiB).
	if p := peakHeap.Load(); p > 2*(int64(before)+capBytes)+32<<20 {
		t.Errorf("heap in use peaked at %d MiB (baseline %d MiB, cap %d MiB)", p>>20, before>>20, capBytes>>20)
	}
	budgetReturnsToZero(t, h)
	after := heapInUse()
	if after > before+8<<20 {
		t.Errorf("heap in use %d MiB before, %d MiB after every body was dropped", before>>20, after>>20)
	}

	// With the budget free, a normal request passes.
	resp, err := http.Post("http://"+s.HTTPAddr()+"/v2/models/nobatch/infer", "application/json",
		strings.NewReader(`{"inputs":[{"name":"X","shape":[2,3],"datatype":"FP32","data":[1,2,3,4,5,6]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("request after the storm: status %d", resp.StatusCode)
	}
	t.Logf("%d refused with 503, %d held until the timeout; peak reserved %d MiB, peak heap %d MiB (baseline %d MiB)",
		busy, timedOut, peakReserved.Load()>>20, peakHeap.Load()>>20, before>>20)
}

// TestHTTPBodyOverMaxInputSize: a declared Content-Length over the limit is
// refused before any of the body is read, a chunked or compressed body
// when it passes the limit, each with Triton's message naming the flag.
func TestHTTPBodyOverMaxInputSize(t *testing.T) {
	const limit = 1 << 20
	s, h := startSimLimits(t, HTTPLimits{MaxInputSize: limit}, 0)
	url := "http://" + s.HTTPAddr() + "/v2/models/nobatch/infer"
	check := func(name string, resp *http.Response, err error, wantSize string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf(`{"error":"Request JSON size of %s exceeds the maximum allowed value of %d bytes. Use --http-max-input-size to increase the limit."}`, wantSize, limit)
		if resp.StatusCode != http.StatusBadRequest || string(b) != want {
			t.Errorf("%s: %d %s\nwant 400 %s", name, resp.StatusCode, b, want)
		}
	}

	// Declared: only the headers are sent, and the answer still comes.
	conn, err := net.Dial("tcp", s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v2/models/nobatch/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", limit+1)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	check("declared", resp, err, fmt.Sprint(limit+1))

	// Chunked: the length is known only once the limit is passed.
	resp, err = http.Post(url, "application/json", io.MultiReader(strings.NewReader(`{"x":"`), strings.NewReader(strings.Repeat("a", limit))))
	check("chunked", resp, err, fmt.Sprintf("%d+", limit+1))

	// Compressed: a small body that inflates past the limit.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(make([]byte, 4*limit))
	_ = zw.Close()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(gz.Bytes()))
	req.Header.Set("Content-Encoding", "gzip")
	resp, err = http.DefaultClient.Do(req)
	check("gzip", resp, err, fmt.Sprintf("%d+", limit+1))

	// Exactly at the limit is allowed (and then fails as JSON: Triton's
	// INTERNAL, 500).
	resp, err = http.Post(url, "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), limit)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), "failed to parse the request JSON") {
		t.Errorf("body at the limit: %d %s", resp.StatusCode, b)
	}
	budgetReturnsToZero(t, h)
}

// TestHTTPIdleConnectionIsClosed: a keep-alive connection with no next
// request is closed after IdleTimeout.
func TestHTTPIdleConnectionIsClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	s, _ := startSimLimits(t, HTTPLimits{IdleTimeout: idle}, 0)
	conn, err := net.Dial("tcp", s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("live: %d", resp.StatusCode)
	}
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(idle + 5*time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v, want the server's close (EOF)", err)
	}
	if took := time.Since(start); took < idle {
		t.Errorf("closed after %s, before the %s idle timeout", took, idle)
	}
}

// TestGRPCMaxInputSize: a gRPC message over the limit is refused with
// RESOURCE_EXHAUSTED, as Triton's gRPC refuses one over INT32_MAX; one
// under it passes.
func TestGRPCMaxInputSize(t *testing.T) {
	const limit = 64 << 10
	s, _ := startSimLimits(t, HTTPLimits{}, limit)
	c := dial(t, s, "grpc")
	send := func(elems int) error {
		_, err := c.Infer(context.Background(), &triton.InferRequest{
			Model:  "strings",
			Inputs: []triton.Tensor{{Name: "TEXT", Datatype: "BYTES", Shape: []int64{1, 1}, Data: kserve.EncodeBytes([][]byte{make([]byte, elems)})}},
		})
		return err
	}
	if err := send(1 << 10); err != nil {
		t.Fatalf("a 1 KiB request under a 64 KiB limit: %v", err)
	}
	err := send(2 * limit)
	var te *triton.Error
	if !errors.As(err, &te) || te.Code != codes.ResourceExhausted || !strings.Contains(te.Message, "larger than max") {
		t.Fatalf("a 128 KiB request over a 64 KiB limit: %v", err)
	}
}

func TestHTTPLimitsCheck(t *testing.T) {
	for _, tc := range []struct {
		limits HTTPLimits
		ok     bool
	}{
		{HTTPLimits{}, true},
		{HTTPLimits{MaxInputSize: 2 << 30}, false},
		{HTTPLimits{MaxInputSize: MaxHTTPMaxInputSize}, true},
	} {
		if err := tc.limits.withDefaults().check(); (err == nil) != tc.ok {
			t.Errorf("%+v: check() = %v", tc.limits, err)
		}
	}
}

// TestHTTPLimitsDefaults: the defaults, and those that follow a larger
// MaxInputSize so that its bodies can pass.
func TestHTTPLimitsDefaults(t *testing.T) {
	for _, tc := range []struct {
		in            HTTPLimits
		readTimeout   time.Duration
		headerTimeout time.Duration
	}{
		{HTTPLimits{}, time.Minute, 10 * time.Second},
		{HTTPLimits{MaxInputSize: 640 << 20}, 10 * time.Minute, 10 * time.Second},
		{HTTPLimits{MaxInputSize: MaxHTTPMaxInputSize}, 31 * time.Minute, 10 * time.Second},
		{HTTPLimits{MaxInputSize: 1 << 10, ReadTimeout: time.Second, ReadHeaderTimeout: time.Millisecond}, time.Second, time.Millisecond},
	} {
		got := tc.in.withDefaults()
		if got.ReadTimeout != tc.readTimeout || got.ReadHeaderTimeout != tc.headerTimeout || got.IdleTimeout != DefaultHTTPIdleTimeout {
			t.Errorf("%+v with defaults = %+v", tc.in, got)
		}
	}
}
