package session_test

import (
	"testing"
)

// TestHTTPConcurrency: over HTTP/1.1 each request in flight needs its own
// connection; a concurrency of 8 from the command line's defaults must
// reach the server as 8 concurrent requests, which the dynamic batcher then
// groups (a serialized client would leave every batch at size 1).
func TestHTTPConcurrency(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	c := quickConfig(srv, "resnet50")
	c.Protocol, c.URL, c.Concurrency = "http", srv.HTTPAddr(), 8
	runOK(t, c)
	st, err := srv.Engine().ModelStatistics("resnet50", "")
	if err != nil {
		t.Fatal(err)
	}
	ms := st.ModelStats[0]
	if ms.ExecutionCount == 0 {
		t.Fatal("no executions")
	}
	if avg := float64(ms.InferenceCount) / float64(ms.ExecutionCount); avg < 1.5 {
		t.Errorf("average batch %.2f over HTTP at concurrency 8: requests did not arrive concurrently", avg)
	}
}
