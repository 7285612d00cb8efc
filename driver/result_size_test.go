package driver

import (
	"testing"
	"unsafe"
)

// TestResultSize holds a Result to 80 bytes, the malloc size class it has
// been in since it was 72: the workers' batches hold DefaultResultBatch of
// them, and the aggregator reads every one.
func TestResultSize(t *testing.T) {
	if n := unsafe.Sizeof(Result{}); n > 80 {
		t.Errorf("a Result is %d bytes, more than 80: put new fields in ResponseTiming or pack them", n)
	}
}
