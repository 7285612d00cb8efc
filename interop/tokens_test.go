package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/session"
)

// repeatIn is the length of repeat_int32's IN in the test: 4 responses a
// request.
const repeatIn = 4

// TestDecoupledNumbersAreNotTokens runs tritontop against a real Triton's
// repeat_int32, a decoupled model that answers a request with one
// response per element of its INT32 input, over a gRPC stream at
// concurrency 4. Its responses are numbers, not an LLM's tokens: the text
// summary has Response Throughput and no output token throughput, the
// CSV no token columns, the run file no output tokens; every request got
// its 4 responses and Triton counted every request tritontop did.
func TestDecoupledNumbersAreNotTokens(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	const model = "repeat_int32"
	srv := interop.Start(t, interop.Options{Models: []string{model}})
	before := srv.Statistics(t, model)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Its requests: IN of repeatIn zeros, DELAY of as many zero
	// milliseconds, WAIT 0, streamed over gRPC at concurrency 4.
	cfg := session.Defaults()
	cfg.URL, cfg.Model, cfg.Streaming, cfg.Concurrency = srv.GRPC, model, true, 4
	cfg.Shapes = []string{fmt.Sprintf("IN:%d", repeatIn), fmt.Sprintf("DELAY:%d", repeatIn), "WAIT:1"}
	cfg.InputData, cfg.MetricsURLs = "zero", []string{srv.MetricsURL()}
	cfg.Record, cfg.Headless, cfg.Tick, cfg.Duration, cfg.Drain = file, true, 200*time.Millisecond, time.Second, 10*time.Second
	s, err := session.New(cfg, nil, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s.Wait(ctx)
	if err := s.Finish(ctx); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	d := interop.Delta(before, srv.Statistics(t, model))
	text := stdout.String()
	t.Logf("summary:\n%s", text)

	run, err := record.ReadAll(file)
	if err != nil || run.Summary == nil {
		t.Fatalf("run file: %v", err)
	}
	c := run.Summary.Client
	if c.Successes == 0 || uint64(c.Successes) != d.Inference.Success.Count || c.Errors != 0 {
		t.Errorf("tritontop: %d requests (%d errors); Triton %d", c.Successes, c.Errors, d.Inference.Success.Count)
	}
	if sc := c.Streaming; sc == nil || sc.Responses != repeatIn*c.Successes || sc.OutputTokens != 0 {
		t.Errorf("streaming %+v; want %d responses a request and no token", sc, repeatIn)
	}
	if !strings.Contains(text, "Response Throughput:") || strings.Contains(strings.ToLower(text), "token") {
		t.Errorf("the summary of a model that generates no text speaks of tokens, or not of responses:\n%s", text)
	}
	var csv bytes.Buffer
	if err := report.WriteCSV(&csv, run); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(csv.String(), "Token") {
		t.Errorf("CSV with token columns:\n%s", csv.String())
	}
	t.Logf("wall time %v", time.Since(begin).Round(time.Millisecond))
}
