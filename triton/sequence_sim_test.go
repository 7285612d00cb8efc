package triton_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// TestSequenceRequestsAgainstSimulator sends two interleaved sequences to
// the simulator's simple_sequence and simple_dyna_sequence, Triton's
// example stateful models, over gRPC, a gRPC stream and HTTP (binary and
// JSON), with requests made by PrepareSequence: the sequence batcher
// starts each at its first request, counts every request into its own
// correlation id, and ends it at its last.
func TestSequenceRequestsAgainstSimulator(t *testing.T) {
	s, err := sim.Start(context.Background(), sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		MetricsAddr: "127.0.0.1:0", Repository: sim.ExampleRepository()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const length = 8
	var nextID uint64 = 1000
	for _, model := range []string{"simple_sequence", "simple_dyna_sequence"} {
		for _, tr := range []struct {
			name, protocol, addr string
			json, stream         bool
		}{
			{"gRPC", "grpc", s.GRPCAddr(), false, false},
			{"gRPC stream", "grpc", s.GRPCAddr(), false, true},
			{"HTTP", "http", s.HTTPAddr(), false, false},
			{"HTTP JSON", "http", s.HTTPAddr(), true, false},
		} {
			c, err := triton.Dial(ctx, tr.addr, triton.Options{Protocol: tr.protocol})
			if err != nil {
				t.Fatal(err)
			}
			md, err := c.ModelMetadata(ctx, model, "")
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := c.ModelConfig(ctx, model, "")
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{})
			if err != nil {
				t.Fatal(err)
			}
			reqs[0].JSON = tr.json
			p, err := c.Prepare(reqs[0])
			if err != nil {
				t.Fatal(err)
			}
			ids := []uint64{nextID, nextID + 1}
			nextID += 2
			seqs := make([]triton.Sequence, len(ids))
			for i, id := range ids {
				if seqs[i], err = c.PrepareSequence(p, id); err != nil {
					t.Fatal(err)
				}
			}
			var stream triton.Stream
			if tr.stream {
				if stream, err = c.OpenStream(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for step := range length {
				for i, seq := range seqs {
					req := seq.Request(step == 0, step == length-1)
					if stream == nil {
						if _, err := c.Send(ctx, req); err != nil {
							t.Fatalf("%s %s: sequence %d request %d: %v", model, tr.name, ids[i], step+1, err)
						}
						continue
					}
					// One request at a time, so that the stream's order is
					// the sequence's.
					if err := stream.Send(req, strconv.Itoa(step)); err != nil {
						t.Fatal(err)
					}
					resp, err := stream.Recv()
					if err != nil || resp.Err != nil {
						t.Fatalf("%s %s: sequence %d request %d: %v %v", model, tr.name, ids[i], step+1, err, resp.Err)
					}
				}
			}
			if stream != nil {
				stream.CloseSend()
			}
			c.Close()
			checkEnded(t, s, model, tr.name, ids, length)
		}
	}
}

// checkEnded waits for the sequences' last requests to execute and checks
// that each ended in order with all its requests.
func checkEnded(t *testing.T, s *sim.Server, model, transport string, ids []uint64, length uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := s.Engine().SequenceStats(model)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, rec := range st.Sequences {
			for _, id := range ids {
				if rec.CorrelationID != strconv.FormatUint(id, 10) || rec.Outcome != sim.SequenceEnded {
					continue
				}
				found++
				if rec.StringID || rec.Requests != length || rec.Executed != length || rec.OutOfOrder != 0 {
					t.Errorf("%s %s: sequence %d: %+v, want %d requests executed in order", model, transport, id, rec, length)
				}
			}
		}
		if found == len(ids) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: sequences %v did not all end: %+v", model, transport, ids, st.Sequences)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
