package driver

import (
	"testing"
	"unsafe"
)

// TestResultSize holds a Result to 80 bytes: a worker's batch of
// DefaultResultBatch of them is one allocation of 5,120 bytes, in the 5,376
// byte size class (84 B per request in the driver's benchmarks; 76 B at
// 72 bytes, before the client's send and receive times). The next size
// class starts past 88 bytes.
func TestResultSize(t *testing.T) {
	if n := unsafe.Sizeof(Result{}); n > 80 {
		t.Errorf("a Result is %d bytes, more than 80: put new fields in ResponseTiming or pack them", n)
	}
}
