package session_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// phasesRun runs c with a CSV and a run file, and returns the CSV's rows
// and the run file's one step. With until above 0 the run has no duration:
// it is stopped once srv has answered until requests of c's model, so that
// the step's client and Triton's averages are over requests enough that
// the few at its edges, which one counts and the other not, weigh little.
func phasesRun(t *testing.T, srv *sim.Server, c session.Config, until uint64) ([][]string, record.Step) {
	t.Helper()
	dir := t.TempDir()
	c.CSV, c.Record = filepath.Join(dir, "out.csv"), filepath.Join(dir, "run.jsonl")
	if until == 0 {
		runOK(t, c)
	} else {
		phasesRunUntil(t, srv, c, until)
	}
	f, err := os.Open(c.CSV)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("CSV: %v, %d rows", err, len(rows))
	}
	run, err := record.ReadAll(c.Record)
	if err != nil || run.Summary == nil || len(run.Summary.Steps) != 1 {
		t.Fatalf("run file: %v", err)
	}
	return rows, run.Summary.Steps[0]
}

// phasesRunUntil runs c without a duration until srv has answered until
// requests of c's model, then stops it as a signal does.
func phasesRunUntil(t *testing.T, srv *sim.Server, c session.Config, until uint64) {
	t.Helper()
	c.Duration = 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() { done <- session.Run(ctx, c, io.Discard, &stderr) }()
	answered := func() uint64 {
		st, err := srv.Engine().ModelStatistics(c.Model, "")
		if err != nil || len(st.GetModelStats()) == 0 {
			return 0
		}
		return st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount()
	}
	reached := eventually(t, 45*time.Second, func() bool { return answered() >= until })
	cancel()
	if err := <-done; err != nil || !reached {
		t.Fatalf("run: %v, %d of %d requests answered: %s", err, answered(), until, stderr.String())
	}
}

// phasesColumn is the CSV's value in column col, or a failed test.
func phasesColumn(t *testing.T, rows [][]string, col string) string {
	t.Helper()
	i := slices.Index(rows[0], col)
	if i < 0 {
		t.Fatalf("no %s column: %v", col, rows[0])
	}
	return rows[1][i]
}

// phasesCheckStep checks that every success of the step was timed, that
// Client Send and Client Recv are above 0, and that send + receive +
// Triton's request time is at most the client's latency.
func phasesCheckStep(t *testing.T, st record.Step) {
	t.Helper()
	send, okS := st.Client.ClientSend()
	recv, okR := st.Client.ClientRecv()
	if !okS || !okR || send <= 0 || recv <= 0 || st.Client.Timed != st.Client.Successes || st.Client.Successes == 0 {
		t.Fatalf("%d of %d successes timed: send %v, recv %v", st.Client.Timed, st.Client.Successes, send, recv)
	}
	if !st.Server.Available {
		t.Fatalf("no server statistics")
	}
	lat := st.Client.Latency.Mean
	t.Logf("send %v + recv %v + server %v = %v <= latency %v", send, recv, st.Server.Request, send+recv+st.Server.Request, lat)
	// The client's mean is over the requests it saw end in the step, Triton's
	// over those its statistics counted between the step's reads, taken at
	// tick boundaries: on a busy host the two sets differ by a request or
	// two at the edges, so the bound has 0.5% of the latency to spare.
	if send+recv+st.Server.Request > lat+lat/200 {
		t.Errorf("send %v + recv %v + Triton's request %v > the client's latency %v", send, recv, st.Server.Request, lat)
	}
}

// TestClientSendRecvMeasured: over gRPC and HTTP against the simulator,
// the CSV's Client Send and Client Recv columns hold numbers, the run
// file's step measured both for its requests, and send + receive + Triton's
// request time is no more than the client's latency, which holds all three.
func TestClientSendRecvMeasured(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"grpc", "http"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t)
			c := quickConfig(srv, "resnet50")
			c.Protocol, c.Concurrency = proto, 2
			if proto == "http" {
				c.URL = srv.HTTPAddr()
			}
			rows, st := phasesRun(t, srv, c, 0)
			for _, col := range []string{"Client Send", "Client Recv", "request/response"} {
				if v := phasesColumn(t, rows, col); v != "" {
					if _, err := strconv.ParseFloat(v, 64); err != nil {
						t.Errorf("%s = %q: %v", col, v, err)
					}
				} else {
					t.Errorf("%s is empty", col)
				}
			}
			phasesCheckStep(t, st)
		})
	}
}
