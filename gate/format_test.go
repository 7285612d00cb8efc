package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestLatencyStatistics: each latency statistic reads its own field of the
// span's latency (from the send here: send-).
func TestLatencyStatistics(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	n := Numbers{Client: stats.ClientStats{Requests: 10, Successes: 10,
		Latency: stats.Latency{Count: 10, Min: ms(1), Mean: ms(2), P50: ms(3), P90: ms(4), P95: ms(5), P99: ms(6), P999: ms(7), Max: ms(8)}}}
	for expr, want := range map[string]float64{
		"send-min<1s": 1, "send-avg<1s": 2, "send-p50<1s": 3, "send-p90<1s": 4,
		"send-p95<1s": 5, "send-p99<1s": 6, "send-p99.9<1s": 7, "send-max<1s": 8,
	} {
		r := Check(mustParse(t, expr), "run", n)[0]
		if r.Value == nil || *r.Value != want || !r.Pass || r.Unit != "ms" {
			t.Errorf("%s: %+v, want %g ms", expr, r, want)
		}
	}
}

// TestWithUnit: values are written with the precision their unit
// deserves.
func TestWithUnit(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{123.4, "ms", "123 ms"},
		{12.345, "ms", "12.35 ms"},
		{0.1234, "ms", "0.123 ms"},
		{0.5, "%", "0.50%"},
		{812, "requests", "812 requests"},
		{250.04, "infer/s", "250.0 infer/s"},
		{3.14159, "", "3.1"},
	} {
		if got := WithUnit(c.v, c.unit); got != c.want {
			t.Errorf("WithUnit(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

// TestGatesEmpty: gates with no threshold, or models without any, have
// nothing to check.
func TestGatesEmpty(t *testing.T) {
	if !(Gates{}).Empty() || !(Gates{Models: map[string][]Threshold{"a": nil}}).Empty() {
		t.Error("gates without thresholds are not empty")
	}
	if (Gates{Run: mustParse(t, "p99<1s")}).Empty() || (Gates{Models: map[string][]Threshold{"a": mustParse(t, "p99<1s")}}).Empty() {
		t.Error("gates with a threshold are empty")
	}
}

// TestFailureWrapsItsCause: a Failure (exit 99) says its cause and
// unwraps to it.
func TestFailureWrapsItsCause(t *testing.T) {
	cause := errors.New("p99<10ms over run: 12.00 ms")
	var err error = Failure{Err: cause}
	if err.Error() != cause.Error() || !errors.Is(err, cause) {
		t.Errorf("failure %v does not carry %v", err, cause)
	}
	var f Failure
	if !errors.As(err, &f) {
		t.Error("not a Failure")
	}
}

// TestWriteJUnitFile writes the report whole at its path, over an old
// one, and refuses a path in a missing directory, naming --junit.
func TestWriteJUnitFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := 12.5
	s := ThresholdSuite("tritontop", []record.ThresholdResult{{Threshold: "p99<100ms", Scope: "run", Value: &v, Limit: 100, Unit: "ms", Pass: true}}, time.Second)
	if err := WriteJUnitFile(path, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<?xml") || !strings.Contains(string(b), `p99&lt;100ms over run`) {
		t.Errorf("junit file:\n%s", b)
	}
	ValidateJUnit(t, b)
	err = WriteJUnitFile(filepath.Join(t.TempDir(), "no", "dir", "junit.xml"), s)
	if err == nil || !strings.Contains(err.Error(), "--junit") {
		t.Errorf("a path in a missing directory: %v", err)
	}
}
