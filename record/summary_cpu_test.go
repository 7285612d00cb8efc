package record

import (
	"testing"
	"time"
)

// TestCPUMaxSkipsSlivers: a sliver of a tick (the end of a run) reads one
// 10 ms clock count as cores; once a full tick is seen, slivers no longer
// set the maximum, and a run of slivers alone still has one.
func TestCPUMaxSkipsSlivers(t *testing.T) {
	var c CPUTotals
	c.AddMax(5.7, 5*time.Millisecond)
	if c.MaxCores != 5.7 {
		t.Fatalf("slivers only: max %v, want 5.7", c.MaxCores)
	}
	c.AddMax(0.38, time.Second)
	c.AddMax(0.31, time.Second)
	c.AddMax(2.0, 8*time.Millisecond)
	if c.MaxCores != 0.38 {
		t.Errorf("max %v, want the full ticks' 0.38", c.MaxCores)
	}
	c.AddMax(0.5, CPUMaxTick)
	if c.MaxCores != 0.5 {
		t.Errorf("max %v after a tick of CPUMaxTick at 0.5", c.MaxCores)
	}
}

// TestClientCPUMaxNotUnderAverage: the average integrates the slivers'
// counts that the maximum leaves out; the maximum reported is never below
// it.
func TestClientCPUMaxNotUnderAverage(t *testing.T) {
	c := CPUTotals{Ticks: 3, CPUSeconds: 0.62*2 + 0.01, Seconds: 2.005}
	c.AddMax(0.61, time.Second)
	c.AddMax(0.60, time.Second)
	c.AddMax(2.0, 5*time.Millisecond)
	cpu := c.ClientCPU()
	if cpu.AvgCores <= 0.61 || cpu.MaxCores != cpu.AvgCores {
		t.Errorf("avg %v, max %v: want the max raised to the average", cpu.AvgCores, cpu.MaxCores)
	}
}
