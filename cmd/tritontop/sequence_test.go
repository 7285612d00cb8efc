package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/sim"
)

// startExampleSim starts the simulator with Triton's example model
// repository, simple_sequence among it, its sequence models keeping an
// idle sequence for a minute instead of Triton's default second: on a
// loaded host a sequence can wait a second between two requests, and the
// server would release it and refuse its next request, which these tests
// do not mean to measure.
func startExampleSim(t *testing.T) *sim.Server {
	t.Helper()
	repo := sim.ExampleRepository()
	for i := range repo.Models {
		if sb := repo.Models[i].SequenceBatching; sb != nil {
			c := *sb
			c.MaxSequenceIdleMicroseconds = 60_000_000
			repo.Models[i].SequenceBatching = &c
		}
	}
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: repo,
		Engine:     sim.EngineOptions{MetricsInterval: 250 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestSequenceModelRun is the run: tritontop on simple_sequence
// with --sequence-length 20 --num-of-sequences 4 --concurrency 4, over
// gRPC and over HTTP. The simulator's sequence batcher saw every sequence
// start and end, each with all its requests executed in order, 20 ± 20%
// long but for those the end of the run cut short; the summary counts the
// same sequences and times them, and the run file has 4 sequences active
// while the load ran. Each run lasts 5 s, long enough for two sequences
// in each place even when a loaded host slows the client tenfold.
func TestSequenceModelRun(t *testing.T) {
	srv := startExampleSim(t)
	for _, proto := range []struct{ name, flag, addr string }{
		{"gRPC", "grpc", srv.GRPCAddr()},
		{"HTTP", "http", srv.HTTPAddr()},
	} {
		t.Run(proto.name, func(t *testing.T) {
			before, err := srv.Engine().SequenceStats("simple_sequence")
			if err != nil {
				t.Fatal(err)
			}
			runFile := filepath.Join(t.TempDir(), "seq.jsonl")
			sum := summaryOf(t, "-m", "simple_sequence", "-i", proto.flag, "-u", proto.addr,
				"--metrics-url", "http://"+srv.MetricsAddr()+"/metrics",
				"--sequence-length", "20", "--num-of-sequences", "4", "--concurrency", "4",
				"--duration", "5s", "--record", runFile)
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
			run, err := record.ReadAll(runFile)
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
// counts its sequences and gives their latency; -f with --verbose-csv adds
// the sequence columns to the CSV, live and in replay, and only then; a
// sequence model run without sequence flags takes perf_analyzer's
// defaults; and open loop with --serial-sequences runs too.
func TestSequenceModelSummaryText(t *testing.T) {
	srv := startExampleSim(t)
	dir := t.TempDir()
	runFile, csvFile := filepath.Join(dir, "seq.jsonl"), filepath.Join(dir, "seq.csv")
	code, stdout, stderr := runCLI("-m", "simple_sequence", "-u", srv.GRPCAddr(), "--duration", "1500ms",
		"--record", runFile, "-f", csvFile, "--verbose-csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Sequence count: ", "Avg sequence latency: ", "p99 sequence latency: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	const seqColumns = ",Sequence Count,Sequences/Second,Avg Sequence Latency,p50 Sequence Latency,p90 Sequence Latency,p95 Sequence Latency,p99 Sequence Latency\n"
	live, err := os.ReadFile(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	if header, row, _ := strings.Cut(string(live), "\n"); !strings.HasSuffix(header+"\n", seqColumns) ||
		strings.Count(row, ",") != strings.Count(header, ",") || strings.HasSuffix(row, ",0,0,,,,,\n") {
		t.Errorf("-f with --verbose-csv:\n%s", live)
	}
	code, replayed, stderr := runCLI("replay", runFile, "-f", "-", "--verbose-csv")
	if code != 0 || replayed != string(live) {
		t.Errorf("replay -f - --verbose-csv: exit %d, %s\n%s\nwant the live run's\n%s", code, stderr, replayed, live)
	}
	code, plain, stderr := runCLI("replay", runFile, "-f", "-")
	if code != 0 || strings.Contains(plain, "Sequence") || !strings.HasPrefix(plain, "Concurrency,Inferences/Second,") {
		t.Errorf("replay -f - without --verbose-csv: exit %d, %s\n%s", code, stderr, plain)
	}
	code, stdout, stderr = runCLI("-m", "simple_dyna_sequence", "-u", srv.GRPCAddr(), "--request-rate", "200",
		"--num-of-sequences", "3", "--serial-sequences", "--sequence-length", "5", "--sequence-id-range", "100:110",
		"--duration", "1500ms", "--json")
	if code != 0 {
		t.Fatalf("open loop: exit %d: %s", code, stderr)
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
// server says what the model is.
func TestSequenceModelBadInput(t *testing.T) {
	srv := startExampleSim(t)
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"batch above 1", []string{"-b", "2"}, []string{"simple_sequence", "-b 1"}},
		{"sequence id as a request parameter", []string{"--request-parameter", "sequence_id:5:int"},
			[]string{"sequence_id", "simple_sequence", "drop it"}},
	} {
		args := append([]string{"-m", "simple_sequence", "-u", srv.GRPCAddr(), "--duration", "1s"}, c.args...)
		code, stdout, stderr := runCLI(args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.name, code, stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: %q does not mention %q", c.name, stderr, w)
			}
		}
	}
}
