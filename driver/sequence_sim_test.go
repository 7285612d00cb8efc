package driver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// patientSequences gives every sequence model of repo a minute's
// max_sequence_idle_microseconds instead of Triton's default second: on a
// loaded host a sequence can wait a second between two of its requests,
// and the server would then release it and refuse its next request, which
// tests of ordering and counting do not mean to measure.
func patientSequences(repo sim.Repository) sim.Repository {
	for i := range repo.Models {
		if sb := repo.Models[i].SequenceBatching; sb != nil {
			c := *sb
			c.MaxSequenceIdleMicroseconds = 60_000_000
			repo.Models[i].SequenceBatching = &c
		}
	}
	return repo
}

// TestSequencesAgainstSimulator drives Triton's example stateful model
// simple_sequence on the simulator over gRPC, a gRPC stream and HTTP, in
// closed loop and in open loop, serial and not: its sequence batcher sees
// every sequence start, run in order with all its requests executed, and
// end, and no request fails.
func TestSequencesAgainstSimulator(t *testing.T) {
	s, err := sim.Start(context.Background(), sim.Config{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		MetricsAddr: "127.0.0.1:0", Repository: patientSequences(sim.ExampleRepository())})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cases := []struct {
		name      string
		protocol  string
		streaming bool
		load      load.Target
		serial    bool
	}{
		{"gRPC", "grpc", false, load.Target{Mode: load.Concurrency, Concurrency: 4}, false},
		{"gRPC stream", "grpc", true, load.Target{Mode: load.Concurrency, Concurrency: 4}, false},
		{"HTTP", "http", false, load.Target{Mode: load.Concurrency, Concurrency: 4}, false},
		{"HTTP open loop", "http", false, load.Target{Mode: load.Rate, Rate: 300}, true},
		// Overlapping requests, but never one outside its sequence.
		{"gRPC open loop", "grpc", false, load.Target{Mode: load.Rate, Rate: 1000}, false},
	}
	var before sim.SequenceStats
	for i, tc := range cases {
		c := dial(t, s, tc.protocol, 2)
		so := SequenceOptions{Length: 20, Variation: 20, StartID: uint64(1 + 10000*i), Count: 4, Serial: tc.serial}
		run := start(t, context.Background(), Options{Client: c,
			Requests: requests(t, c, "simple_sequence", triton.InputOptions{}), Load: tc.load,
			Streaming: tc.streaming, Sequences: &so})
		// The run lasts until the simulator has seen 8 sequences end, not
		// for a fixed time: a loaded host runs fewer in any given second.
		eventually(t, 60*time.Second, tc.name+": 8 sequences ended", func() bool {
			st, err := s.Engine().SequenceStats("simple_sequence")
			return err == nil && st.Ended-before.Ended >= 8
		})
		// A drain long enough for a loaded host to finish every sequence
		// under way: a request cut off by the drain's end fails.
		run.d.Stop(20 * time.Second)
		res := run.wait(t)
		timed := 0
		for _, r := range res {
			if !r.OK() {
				t.Fatalf("%s: %v", tc.name, r.Err)
			}
			if r.SequenceLatency() > 0 {
				timed++
			}
		}
		var st sim.SequenceStats
		eventually(t, 10*time.Second, tc.name+": every sequence ended", func() bool {
			st, err = s.Engine().SequenceStats("simple_sequence")
			return err == nil && st.Active == 0 && st.Ended == st.Started
		})
		started := st.Started - before.Started
		if started < 8 || st.Restarted != 0 || st.TimedOut != 0 || st.OutOfOrder != 0 {
			t.Errorf("%s: %d sequences started; %d restarted, %d timed out, %d out of order", tc.name, started,
				st.Restarted, st.TimedOut, st.OutOfOrder)
		}
		if timed != int(started) {
			t.Errorf("%s: %d results timed a sequence, %d sequences ended", tc.name, timed, started)
		}
		full := 0
		var short []string
		for _, rec := range st.Sequences[len(st.Sequences)-int(started):] {
			if rec.Outcome != sim.SequenceEnded || rec.Requests != rec.Executed || rec.OutOfOrder != 0 {
				t.Errorf("%s: sequence %s: %+v", tc.name, rec.CorrelationID, rec)
			}
			if rec.Requests >= 16 && rec.Requests <= 24 {
				full++
			} else {
				short = append(short, fmt.Sprintf("%s:%d", rec.CorrelationID, rec.Requests))
			}
			if rec.Requests > 24 {
				t.Errorf("%s: sequence %s has %d requests, more than 20+20%%", tc.name, rec.CorrelationID, rec.Requests)
			}
		}
		// Only the sequences ended early by the stop are shorter.
		if int(started)-full > 4 {
			t.Errorf("%s: %d of %d sequences shorter than 16 (id:requests %v)", tc.name, int(started)-full, started, short)
		}
		before = st
	}
}
