package stats

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLatencyJSONMissing: a span where no request succeeded writes its
// latencies as null, never 0, and reads back as the same Latency; a
// measured one keeps its numbers.
func TestLatencyJSONMissing(t *testing.T) {
	c := ClientStats{Requests: 5, Errors: 5}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"p50_ns":null`) || strings.Contains(string(b), `"p50_ns":0`) {
		t.Errorf("every request failed, but p50 is not null: %s", b)
	}
	var back ClientStats
	if err := json.Unmarshal(b, &back); err != nil || back.Latency != (Latency{}) {
		t.Errorf("read back %+v, %v", back.Latency, err)
	}
	l := Latency{Count: 3, Min: time.Millisecond, Mean: 2 * time.Millisecond, P50: 2 * time.Millisecond, Max: 3 * time.Millisecond}
	b, err = json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var got Latency
	if err := json.Unmarshal(b, &got); err != nil || got != l {
		t.Errorf("round trip %s: %+v, %v", b, got, err)
	}
}
