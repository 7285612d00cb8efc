package stats

import (
	"testing"
	"time"
)

// TestClientSendRecvMeans: the client's own send and receive times are
// means over the requests that timed them, and unknown without one.
func TestClientSendRecvMeans(t *testing.T) {
	var s ClientStats
	if _, ok := s.ClientSend(); ok {
		t.Error("a send time without a timed request")
	}
	if _, ok := s.ClientRecv(); ok {
		t.Error("a receive time without a timed request")
	}
	s = ClientStats{Timed: 4, SendTotal: 40 * time.Microsecond, RecvTotal: 20 * time.Microsecond}
	if d, ok := s.ClientSend(); !ok || d != 10*time.Microsecond {
		t.Errorf("send %v %v, want 10µs", d, ok)
	}
	if d, ok := s.ClientRecv(); !ok || d != 5*time.Microsecond {
		t.Errorf("receive %v %v, want 5µs", d, ok)
	}
}

// TestReplicasUpAndGPUUtilization: the replicas in are counted, and a
// replica's GPU utilization is the mean of its GPUs that report one.
func TestReplicasUpAndGPUUtilization(t *testing.T) {
	s := Snapshot{Replicas: []Replica{{Up: true}, {}, {Up: true}}}
	if n := s.ReplicasUp(); n != 2 {
		t.Errorf("%d replicas up, want 2", n)
	}
	r := Replica{Metrics: ServerMetrics{Available: true, GPUs: []GPU{
		{Utilization: 0.5, HasUtilization: true}, {Utilization: 0.9}, {Utilization: 0.7, HasUtilization: true}}}}
	if u, ok := r.GPUUtilization(); !ok || u < 0.5999 || u > 0.6001 {
		t.Errorf("utilization %v %v, want 0.6 (the two GPUs that report one)", u, ok)
	}
	r.Metrics.Available = false
	if _, ok := r.GPUUtilization(); ok {
		t.Error("a utilization from an unavailable metrics endpoint")
	}
	if _, ok := (&Replica{Metrics: ServerMetrics{Available: true}}).GPUUtilization(); ok {
		t.Error("a utilization without a GPU that reports one")
	}
}
