package stats

import (
	"testing"
	"time"
)

// BenchmarkAggregatorAddReplicas is BenchmarkAggregatorAdd with the
// results spread over two replicas, each counted apart as well; ns/op and
// allocs/op are per result.
func BenchmarkAggregatorAddReplicas(b *testing.B) {
	a := NewAggregator(time.Second, 10*time.Second)
	a.SetEndpoints(2)
	batch := benchBatch(256)
	for i := range batch {
		batch[i].Endpoint = uint16(i % 2)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		n := min(len(batch), b.N-i)
		a.Add(batch[:n])
	}
}
