package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// seqExampleSim starts the simulator with Triton's example model
// repository, simple_sequence among it, its sequence models keeping an
// idle sequence for a minute instead of Triton's default second: on a
// loaded host a sequence can wait a second between two requests, and the
// server would release it and refuse its next request, which these tests
// do not mean to measure.
func seqExampleSim(t *testing.T) *sim.Server {
	t.Helper()
	repo := sim.ExampleRepository()
	for i := range repo.Models {
		if sb := repo.Models[i].SequenceBatching; sb != nil {
			c := *sb
			c.MaxSequenceIdleMicroseconds = 60_000_000
			repo.Models[i].SequenceBatching = &c
		}
	}
	return startSimRepo(t, repo)
}

// seqRunUntil runs c (with no Duration: until stopped) and stops it as a
// signal does once done holds, polled every 10 ms, or after a minute; it
// returns the run's error and what it printed.
func seqRunUntil(t *testing.T, c session.Config, done func() bool) (err error, stdout, stderr string) {
	t.Helper()
	c.Duration = 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	ended := make(chan error, 1)
	go func() { ended <- session.Run(ctx, c, &out, &errb) }()
	for {
		select {
		case err = <-ended:
			return err, out.String(), errb.String()
		case <-time.After(10 * time.Millisecond):
			if done() {
				cancel()
			}
		}
	}
}

// seqTicksWritten reports whether the run file at path holds at least n
// ticks (a line each after the header).
func seqTicksWritten(path string, n int) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Count(b, []byte("\n")) >= n+1
}

// seqEnded is how many sequences of model the simulator's sequence batcher
// ended.
func seqEnded(t *testing.T, srv *sim.Server, model string) int {
	t.Helper()
	st, err := srv.Engine().SequenceStats(model)
	if err != nil {
		t.Error(err)
		return 0
	}
	return int(st.Ended)
}

// TestSequenceModelRun is the run: simple_sequence with
// Sequences.Length 20, Sequences.Count 4 and Concurrency 4 (--sequence-length
// 20 --num-of-sequences 4 --concurrency 4), over gRPC and over HTTP, each
// against its own simulator, until its sequence batcher has ended 8
// sequences and the run file holds 3 ticks. The simulator saw every
// sequence start and end, each with all its requests executed in order,
// 20 ± 20% long but for those the end of the run cut short; the summary
// counts the same sequences and times them, and the run file has 4
// sequences active while the load ran.
func TestSequenceModelRun(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"grpc", "http"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			srv := seqExampleSim(t)
			before, err := srv.Engine().SequenceStats("simple_sequence")
			if err != nil {
				t.Fatal(err)
			}
			c := quickConfig(srv, "simple_sequence")
			if proto == "http" {
				c.URL = srv.HTTPAddr()
			}
			c.Protocol, c.JSON = proto, true
			c.Sequences.Length, c.Sequences.Count, c.Concurrency = 20, 4, 4
			c.Record = filepath.Join(t.TempDir(), "seq.jsonl")
			err, stdout, stderr := seqRunUntil(t, c, func() bool {
				return seqEnded(t, srv, "simple_sequence")-int(before.Ended) >= 8 && seqTicksWritten(c.Record, 3)
			})
			if err != nil {
				t.Fatalf("run failed: %v\n%s", err, stderr)
			}
			var sum record.Summary
			if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
				t.Fatalf("summary JSON: %v\n%s", err, stdout)
			}
			st, err := srv.Engine().SequenceStats("simple_sequence")
			if err != nil {
				t.Fatal(err)
			}
			started := st.Started - before.Started
			ended := st.Ended - before.Ended
			t.Logf("%d sequences started, %d ended, %d requests", started, ended, sum.Client.Requests)
			if started < 8 || ended != started || st.Active != 0 || st.TimedOut != before.TimedOut ||
				st.Restarted != before.Restarted || st.OutOfOrder != 0 {
				t.Fatalf("sequence batcher: %d started, %d ended, %d active, %d timed out, %d restarted, %d out of order",
					started, ended, st.Active, st.TimedOut-before.TimedOut, st.Restarted-before.Restarted, st.OutOfOrder)
			}
			recs := st.Sequences[len(st.Sequences)-int(ended):]
			var requests uint64
			short := 0
			for _, r := range recs {
				requests += r.Requests
				if r.Outcome != sim.SequenceEnded || r.Requests != r.Executed || r.OutOfOrder != 0 || r.Requests > 24 {
					t.Errorf("sequence %s: %+v", r.CorrelationID, r)
				}
				if r.Requests < 16 {
					short++
				}
			}
			// Only the 4 sequences running when the run stopped end early.
			if short > 4 {
				t.Errorf("%d of %d sequences shorter than 16 requests", short, len(recs))
			}
			if requests != uint64(sum.Client.Requests) || sum.Client.Errors != 0 {
				t.Errorf("the sequences hold %d requests, the client sent %d (%d errors)", requests, sum.Client.Requests, sum.Client.Errors)
			}
			if sq := sum.Client.Sequences; sq == nil || sq.Ended != int64(ended) || sq.Latency.Count != int64(ended) ||
				sq.Latency.P50 <= sum.Client.Latency.P50 {
				t.Errorf("summary sequences %+v, want %d ended taking longer than a request (%v)", sq, ended, sum.Client.Latency.P50)
			}
			run, err := record.ReadAll(c.Record)
			if err != nil {
				t.Fatal(err)
			}
			active, timed := 0, int64(0)
			for _, s := range run.Snapshots {
				if !s.Load.Drain && s.Load.Sequences == 4 {
					active++
				}
				if s.Tick.Sequences != nil {
					timed += s.Tick.Sequences.Ended
					if s.SequenceHistogram == "" {
						t.Errorf("tick %d times sequences without their histogram", s.Seq)
					}
				}
			}
			if active == 0 || timed != int64(ended) {
				t.Errorf("run file: %d ticks with 4 sequences active, %d sequences timed in ticks (want %d)", active, timed, ended)
			}
		})
	}
}

// TestSequenceModelSummaryText: the text summary of a sequence model's run
// counts its sequences and gives their latency; CSV with VerboseCSV (-f
// with --verbose-csv) adds the sequence columns to the CSV, live and in
// replay, and only then; a sequence model run without sequence settings
// takes perf_analyzer's defaults; and open loop with Sequences.Serial
// (--serial-sequences) runs too.
func TestSequenceModelSummaryText(t *testing.T) {
	t.Parallel()
	srv := seqExampleSim(t)
	dir := t.TempDir()
	c := quickConfig(srv, "simple_sequence")
	c.Record, c.CSV, c.VerboseCSV = filepath.Join(dir, "seq.jsonl"), filepath.Join(dir, "seq.csv"), true
	err, stdout, stderr := seqRunUntil(t, c, func() bool {
		return seqEnded(t, srv, "simple_sequence") >= 4 && seqTicksWritten(c.Record, 3)
	})
	if err != nil {
		t.Fatalf("run failed: %v\n%s", err, stderr)
	}
	for _, want := range []string{"Sequence count: ", "Avg sequence latency: ", "p99 sequence latency: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	const seqColumns = ",Sequence Count,Sequences/Second,Avg Sequence Latency,p50 Sequence Latency,p90 Sequence Latency,p95 Sequence Latency,p99 Sequence Latency\n"
	live, err := os.ReadFile(c.CSV)
	if err != nil {
		t.Fatal(err)
	}
	if header, row, _ := strings.Cut(string(live), "\n"); !strings.HasSuffix(header+"\n", seqColumns) ||
		strings.Count(row, ",") != strings.Count(header, ",") || strings.HasSuffix(row, ",0,0,,,,,\n") {
		t.Errorf("CSV with VerboseCSV:\n%s", live)
	}
	replay := func(verbose bool) (error, string, string) {
		var out, errb bytes.Buffer
		err := session.Replay(context.Background(), session.ReplayConfig{File: c.Record, CSV: "-", VerboseCSV: verbose}, &out, &errb)
		return err, out.String(), errb.String()
	}
	if err, replayed, stderr := replay(true); err != nil || replayed != string(live) {
		t.Errorf("replay -f - --verbose-csv: %v, %s\n%s\nwant the live run's\n%s", err, stderr, replayed, live)
	}
	if err, plain, stderr := replay(false); err != nil || strings.Contains(plain, "Sequence") || !strings.HasPrefix(plain, "Concurrency,Inferences/Second,") {
		t.Errorf("replay -f - without --verbose-csv: %v, %s\n%s", err, stderr, plain)
	}

	o := quickConfig(srv, "simple_dyna_sequence")
	o.RequestRate, o.JSON = 200, true
	o.Sequences = session.SequenceConfig{Count: 3, Serial: true, Length: 5, Variation: 20, IDRange: "100:110"}
	err, stdout, stderr = seqRunUntil(t, o, func() bool { return seqEnded(t, srv, "simple_dyna_sequence") >= 10 })
	if err != nil {
		t.Fatalf("open loop: %v: %s", err, stderr)
	}
	var sum record.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	st, err := srv.Engine().SequenceStats("simple_dyna_sequence")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Client.Errors != 0 || sum.Client.Sequences == nil || st.Ended != st.Started || st.Started < 10 {
		t.Errorf("open loop: %d errors, sequences %+v; server started %d, ended %d", sum.Client.Errors, sum.Client.Sequences, st.Started, st.Ended)
	}
	for _, r := range st.Sequences {
		if r.CorrelationID < "100" || r.CorrelationID > "109" || len(r.CorrelationID) != 3 {
			t.Errorf("correlation id %s outside --sequence-id-range 100:110", r.CorrelationID)
		}
	}
}

// TestSequenceModelBadInput: what only a stateful model refuses, once the
// server says what the model is: a usage error of one line, nothing
// printed.
func TestSequenceModelBadInput(t *testing.T) {
	t.Parallel()
	srv := seqExampleSim(t)
	for _, tc := range []struct {
		name string
		set  func(*session.Config)
		want []string
	}{
		{"batch above 1", func(c *session.Config) { c.BatchSize = 2 }, []string{"simple_sequence", "-b 1"}},
		{"sequence id as a request parameter", func(c *session.Config) { c.LLM.RequestParameters = []string{"sequence_id:5:int"} },
			[]string{"sequence_id", "simple_sequence", "drop it"}},
	} {
		c := quickConfig(srv, "simple_sequence")
		tc.set(&c)
		err, stdout, stderr := runConfig(t, c)
		wantRefused(t, err, tc.want...)
		if stdout != "" || stderr != "" {
			t.Errorf("%s: stdout %q, stderr %q; want nothing but the error", tc.name, stdout, stderr)
		}
	}
}
