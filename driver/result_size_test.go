package driver

import (
	"testing"
	"unsafe"
)

// TestResultSize holds a Result to 72 bytes: a worker's batch of
// DefaultResultBatch of them is one allocation of 4,608 bytes, in the 4,864
// byte size class (76 B per request in the driver's benchmarks); at 80
// bytes it would be 5,376 (84 B per request).
func TestResultSize(t *testing.T) {
	if n := unsafe.Sizeof(Result{}); n > 72 {
		t.Errorf("a Result is %d bytes, more than 72: put new fields in ResponseTiming or pack them", n)
	}
}
