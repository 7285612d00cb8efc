package stats

import "encoding/json"

// emptyLatencyJSON is a Latency over no successful request: its times are
// missing, not zero.
const emptyLatencyJSON = `{"count":0,"min_ns":null,"mean_ns":null,"p50_ns":null,"p90_ns":null,"p95_ns":null,"p99_ns":null,"p999_ns":null,"max_ns":null}`

// MarshalJSON writes a Latency's times as JSON numbers of nanoseconds, or
// as null when no request succeeded (Count 0): a p50 of 0 would read as a
// measured one. Decoding null leaves a time at 0, so readers of older and
// newer files alike get Count 0 and zero times.
func (l Latency) MarshalJSON() ([]byte, error) {
	if l.Count == 0 {
		return []byte(emptyLatencyJSON), nil
	}
	type plain Latency
	return json.Marshal(plain(l))
}
