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

// TestClientSendRecvMeasuredStreams is TestClientSendRecvMeasured for the
// requests sent over a stream: a model that is not decoupled over gRPC's
// ModelStreamInfer, a decoupled LLM over it, and the LLM over the HTTP
// chat endpoint's server-sent events. Every successful request is timed,
// the CSV's Client Send and Client Recv are numbers above 0, and send +
// receive + Triton's request time is at most the client's latency.
func TestClientSendRecvMeasuredStreams(t *testing.T) {
	srv := startSim(t)
	llm := []string{"-m", "llm", "--request-parameter", "max_tokens:16:int"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"grpc-stream", []string{"-u", srv.GRPCAddr(), "-i", "grpc", "-m", "resnet50"}},
		{"grpc-decoupled", append([]string{"-u", srv.GRPCAddr(), "-i", "grpc"}, llm...)},
		{"http-chat", append([]string{"-u", srv.HTTPAddr(), "-i", "http", "--endpoint", "chat"}, llm...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			csvFile, runFile := filepath.Join(dir, "out.csv"), filepath.Join(dir, "run.jsonl")
			args := append(c.args, "--streaming", "--headless", "--concurrency", "2", "--duration", "2s", "--tick", "500ms",
				"--metrics-url", "http://"+srv.MetricsAddr()+"/metrics", "-f", csvFile, "--record", runFile)
			code, _, stderr := runCLI(args...)
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
			for _, col := range []string{"Client Send", "Client Recv"} {
				i := slices.Index(rows[0], col)
				if i < 0 {
					t.Fatalf("no %s column: %v", col, rows[0])
				}
				if v, err := strconv.ParseFloat(rows[1][i], 64); err != nil || v <= 0 {
					t.Errorf("%s = %q (%v), want a number above 0", col, rows[1][i], err)
				}
			}
			run, err := record.ReadAll(runFile)
			if err != nil || run.Summary == nil || len(run.Summary.Steps) != 1 {
				t.Fatalf("run file: %v", err)
			}
			st := run.Summary.Steps[0]
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
			if send+recv+st.Server.Request > lat {
				t.Errorf("send %v + recv %v + Triton's request %v > the client's latency %v", send, recv, st.Server.Request, lat)
			}
		})
	}
}
