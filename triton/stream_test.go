package triton

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// ModelStreamInfer answers every request on its own goroutine after the
// request's "delay_ms" parameter, so responses overtake each other, and
// reports failures in error_message the way Triton does by default.
func (s *grpcTestServer) ModelStreamInfer(stream pb.GRPCInferenceService_ModelStreamInferServer) error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(r.GetParameters()["delay_ms"].GetInt64Param()) * time.Millisecond)
			msg := &pb.ModelStreamInferResponse{}
			resp, err := s.infer(r)
			if err != nil {
				msg.ErrorMessage = status.Convert(err).Message()
				msg.InferResponse = &pb.ModelInferResponse{Id: r.GetId(), ModelName: r.GetModelName()}
			} else {
				msg.InferResponse = resp
			}
			mu.Lock()
			defer mu.Unlock()
			stream.Send(msg)
		}()
	}
}

func TestStreamMatchesIDsOutOfOrder(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := c.OpenStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	prepared := make([]Prepared, n)
	for i := range prepared {
		req := simpleRequest(int32(i))
		// An id in the prepared bytes must lose to the one Send appends.
		req.ID = "prepared-id"
		// Earlier requests wait longer, so answers come back reversed.
		req.Parameters = map[string]any{"delay_ms": int64(5 * (n - i))}
		prepared[i] = mustPrepare(t, c, req)
	}
	sendErr := make(chan error, 1)
	go func() {
		for i, p := range prepared {
			if err := st.Send(p, fmt.Sprintf("id-%d", i)); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- st.CloseSend()
	}()
	seen := map[string]int{}
	var order []string
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Err != nil {
			t.Fatalf("request %s failed: %v", r.ID, r.Err)
		}
		seen[r.ID] = r.Size
		order = append(order, r.ID)
	}
	if err := <-sendErr; err != nil {
		t.Fatal(err)
	}
	if len(seen) != n || len(order) != n {
		t.Fatalf("received %d responses with %d distinct ids (%v); want %d", len(order), len(seen), order, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range n {
		id := fmt.Sprintf("id-%d", i)
		if want := s.streamSizes[id]; seen[id] != want || want == 0 {
			t.Errorf("%s: size %d; server sent %d", id, seen[id], want)
		}
	}
	if order[0] == "id-0" && order[n-1] == fmt.Sprintf("id-%d", n-1) {
		t.Logf("responses came back in send order (machine too slow to reorder); ids still matched")
	}
}

func TestStreamRequestErrorKeepsStreamOpen(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := c.OpenStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bad := simpleRequest(0)
	bad.Model = "nope"
	if err := st.Send(mustPrepare(t, c, bad), "bad-1"); err != nil {
		t.Fatal(err)
	}
	r, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	want := &Error{Code: codes.Unknown, Message: unknownModel("nope")}
	var te *Error
	if r.ID != "bad-1" || !errors.As(r.Err, &te) || *te != *want {
		t.Errorf("Recv = %q, Err %#v; want bad-1 and %#v", r.ID, r.Err, want)
	}
	if err := st.Send(mustPrepare(t, c, simpleRequest(1)), "good-1"); err != nil {
		t.Fatal(err)
	}
	r, err = st.Recv()
	if err != nil || r.Err != nil || r.ID != "good-1" || r.Size == 0 {
		t.Errorf("after an error: Recv = %+v, %v; want good-1 answered", r, err)
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("Recv after CloseSend = %v; want io.EOF", err)
	}
}

func TestStreamLargeResponse(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := c.OpenStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	big := simpleRequest(0)
	big.Model = "big"
	p := mustPrepare(t, c, big)
	for i := range 3 {
		id := fmt.Sprintf("big-%d", i)
		if err := st.Send(p, id); err != nil {
			t.Fatal(err)
		}
		r, err := st.Recv()
		if err != nil || r.Err != nil {
			t.Fatal(err, r.Err)
		}
		s.mu.Lock()
		want := s.streamSizes[id]
		s.mu.Unlock()
		if r.ID != id || r.Size != want || r.Size < 200000 {
			t.Errorf("Recv = %q, %d; want %q, %d", r.ID, r.Size, id, want)
		}
	}
}

func TestStreamCancelEndsRecv(t *testing.T) {
	s := startGRPCServer(t)
	c := dialGRPC(t, s.addr, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := c.OpenStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Recv()
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Recv after cancel = %v; want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Recv did not return after the stream's context was cancelled")
	}
}

func TestStreamReplyParse(t *testing.T) {
	// error_message (1) and infer_response.id (2 -> 3) among other fields,
	// with a repeated id whose last value wins.
	msg := &pb.ModelStreamInferResponse{
		ErrorMessage: "boom",
		InferResponse: &pb.ModelInferResponse{
			ModelName: "m", Id: "first", RawOutputContents: [][]byte{make([]byte, 40)},
			Parameters: map[string]*pb.InferParameter{"triton_final_response": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}},
		},
	}
	b := mustMarshal(t, msg)
	var r streamReply
	if err := r.parse(b); err != nil || r.id != "first" || r.errMsg != "boom" {
		t.Errorf("parse = %q %q %v", r.id, r.errMsg, err)
	}
	// A second infer_response occurrence merges into the first; its id wins.
	b2 := protowire.AppendTag(b, 2, protowire.BytesType)
	b2 = protowire.AppendBytes(b2, appendIDField(nil, "second"))
	if err := r.parse(b2); err != nil || r.id != "second" || r.errMsg != "boom" {
		t.Errorf("parse with a second id = %q %q %v", r.id, r.errMsg, err)
	}
	// gRPC hands over large messages in several buffers.
	var split streamReply
	parts := mem.BufferSlice{mem.SliceBuffer(b[:5]), mem.SliceBuffer(b[5:20]), mem.SliceBuffer(b[20:])}
	if err := newRawCodec().Unmarshal(parts, &split); err != nil || split.id != "first" || split.errMsg != "boom" || split.size != len(b) {
		t.Errorf("split parse = %q %q %d %v", split.id, split.errMsg, split.size, err)
	}
	if err := r.parse(b[:len(b)-3]); err == nil {
		t.Error("truncated response parsed without error")
	}
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
