package driver

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func TestBackoff(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		base    time.Duration
		attempt int
		want    time.Duration
	}{
		// The first retry waits the base.
		{10 * ms, 0, 10 * ms},
		// Each further retry doubles it.
		{10 * ms, 1, 20 * ms},
		{10 * ms, 3, 80 * ms},
		// Up to the cap.
		{10 * ms, 12, maxBackoff},
		// However many retries.
		{10 * ms, 200, maxBackoff},
	}
	for _, tt := range tests {
		if got := backoff(tt.base, tt.attempt); got != tt.want {
			t.Errorf("backoff(%v, %d) = %v, want %v", tt.base, tt.attempt, got, tt.want)
		}
	}
}

func TestRetryable(t *testing.T) {
	for _, c := range []codes.Code{codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.ResourceExhausted} {
		if !retryable(c) {
			t.Errorf("%v should be retried", c)
		}
	}
	// A bad request stays bad however often it is sent.
	for _, c := range []codes.Code{codes.InvalidArgument, codes.NotFound, codes.Unimplemented, codes.Canceled, codes.PermissionDenied} {
		if retryable(c) {
			t.Errorf("%v should not be retried", c)
		}
	}
}
