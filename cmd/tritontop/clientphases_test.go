package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// TestClientSendRecvMeasured: over gRPC and HTTP against the simulator,
// the CSV's Client Send and Client Recv columns hold numbers, the run
// file's step measured both for its requests, and send + receive + Triton's
// request time is no more than the client's latency, which holds all three.
func TestClientSendRecvMeasured(t *testing.T) {
	srv := startSim(t)
	for _, c := range []struct{ proto, url string }{{"grpc", srv.GRPCAddr()}, {"http", srv.HTTPAddr()}} {
		t.Run(c.proto, func(t *testing.T) {
			dir := t.TempDir()
			csvFile, runFile := filepath.Join(dir, "out.csv"), filepath.Join(dir, "run.jsonl")
			code, _, stderr := runCLI("-u", c.url, "-i", c.proto, "-m", "resnet50", "--headless", "--concurrency", "2",
				"--duration", "1500ms", "--tick", "500ms", "--metrics-url", "http://"+srv.MetricsAddr()+"/metrics",
				"-f", csvFile, "--record", runFile)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			f, err := os.Open(csvFile)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil || len(rows) != 2 {
				t.Fatalf("CSV: %v, %d rows", err, len(rows))
			}
			for _, col := range []string{"Client Send", "Client Recv", "request/response"} {
				i := slices.Index(rows[0], col)
				if i < 0 {
					t.Fatalf("no %s column: %v", col, rows[0])
				}
				if _, err := strconv.ParseFloat(rows[1][i], 64); err != nil {
					t.Errorf("%s = %q: %v", col, rows[1][i], err)
				}
			}
			run, err := record.ReadAll(runFile)
			if err != nil || run.Summary == nil || len(run.Summary.Steps) != 1 {
				t.Fatalf("run file: %v", err)
			}
			st := run.Summary.Steps[0]
			send, okS := st.Client.ClientSend()
			recv, okR := st.Client.ClientRecv()
			if !okS || !okR || send <= 0 || recv <= 0 || st.Client.Timed != st.Client.Successes {
				t.Fatalf("%d of %d successes timed: send %v, recv %v", st.Client.Timed, st.Client.Successes, send, recv)
			}
			lat := st.Client.Latency.Mean
			if !st.Server.Available {
				t.Fatalf("no server statistics")
			}
			t.Logf("send %v + recv %v + server %v = %v <= latency %v", send, recv, st.Server.Request, send+recv+st.Server.Request, lat)
			if send+recv+st.Server.Request > lat {
				t.Errorf("send %v + recv %v + Triton's request %v > the client's latency %v", send, recv, st.Server.Request, lat)
			}
		})
	}
}
