package session_test

import (
	"strconv"
	"testing"
)

// TestClientSendRecvMeasuredStreams is TestClientSendRecvMeasured for the
// requests sent over a stream: a model that is not decoupled over gRPC's
// ModelStreamInfer, a decoupled LLM over it, and the LLM over the HTTP
// chat endpoint's server-sent events. Every successful request is timed,
// the CSV's Client Send and Client Recv are numbers above 0, and send +
// receive + Triton's request time is at most the client's latency.
func TestClientSendRecvMeasuredStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, proto, model, endpoint string
	}{
		{"grpc-stream", "grpc", "resnet50", ""},
		{"grpc-decoupled", "grpc", "llm", ""},
		{"http-chat", "http", "llm", "chat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t)
			c := quickConfig(srv, tc.model)
			c.Protocol, c.Streaming, c.Concurrency = tc.proto, true, 2
			if tc.proto == "http" {
				c.URL = srv.HTTPAddr()
			}
			if tc.endpoint != "" {
				c.Endpoint.Name = tc.endpoint
			}
			var until uint64
			if tc.model == "llm" {
				// Short answers, and requests enough for the averages.
				c.LLM.RequestParameters, until = []string{"max_tokens:4:int"}, 16
			}
			rows, st := phasesRun(t, srv, c, until)
			for _, col := range []string{"Client Send", "Client Recv"} {
				v := phasesColumn(t, rows, col)
				if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 {
					t.Errorf("%s = %q (%v), want a number above 0", col, v, err)
				}
			}
			phasesCheckStep(t, st)
		})
	}
}
