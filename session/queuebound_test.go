package session_test

import (
	"strings"
	"testing"
)

// TestQueueBoundRunSaysSo: a server with one instance, no batching and
// 10 ms per request, at 8 requests in flight, keeps 7 of them waiting: the
// headless lines and the summary name server queueing as the limit.
func TestQueueBoundRunSaysSo(t *testing.T) {
	t.Parallel()
	m := batchingModel("single", 1, 0, 10, 0)
	m.MaxBatchSize, m.DynamicBatching = 0, nil
	srv := startSimWith(t, m)
	c := quickConfig(srv, "single")
	c.Concurrency = 8
	stdout, stderr := runOK(t, c)
	lines, queued := 0, 0
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "infer/s") {
			lines++
		}
		if strings.Contains(l, "⚠ server queueing") {
			queued++
		}
	}
	if queued < 3 {
		t.Errorf("%d of %d progress lines name server queueing, want most:\n%s", queued, lines, stderr)
	}
	if !strings.Contains(stdout, "What limits the load:\n") || !strings.Contains(stdout, "  ⚠ server queueing: requests wait") {
		t.Errorf("summary does not name server queueing:\n%s", stdout)
	}
}
