package driver

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func TestBackoff(t *testing.T) {
	ms := time.Millisecond
	p, err := newRetryPolicy(nil, 10*ms, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		attempt int
		u       float64
		want    time.Duration
	}{
		// The first retry waits the base at most, half of it at least.
		{0, 0.999999, 10 * ms},
		{0, 0, 5 * ms},
		{0, 0.5, 7500 * time.Microsecond},
		// Each further retry doubles it.
		{1, 0.999999, 20 * ms},
		{3, 0, 40 * ms},
		// Up to the cap.
		{12, 0.999999, time.Second},
		{12, 0, 500 * ms},
		// However many retries.
		{200, 0.999999, time.Second},
	}
	for _, tt := range tests {
		if got := p.backoff(tt.attempt, tt.u); got.Round(ms/10) != tt.want {
			t.Errorf("backoff(%d, %v) = %v, want %v", tt.attempt, tt.u, got, tt.want)
		}
	}
}

func TestRetryable(t *testing.T) {
	def, err := newRetryPolicy(nil, time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []codes.Code{codes.Unavailable, codes.ResourceExhausted} {
		if !def.retryable(c) {
			t.Errorf("%v should be retried by default", c)
		}
	}
	// A bad request stays bad however often it is sent; a deadline or a
	// model's own failure is not retried unless asked for.
	for _, c := range []codes.Code{codes.InvalidArgument, codes.NotFound, codes.Unimplemented, codes.Canceled,
		codes.PermissionDenied, codes.DeadlineExceeded, codes.Internal} {
		if def.retryable(c) {
			t.Errorf("%v should not be retried by default", c)
		}
	}
	asked, err := newRetryPolicy([]codes.Code{codes.DeadlineExceeded, codes.Internal}, time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !asked.retryable(codes.Internal) || !asked.retryable(codes.DeadlineExceeded) || asked.retryable(codes.Unavailable) {
		t.Errorf("the codes asked for are not the ones retried")
	}
	if _, err := newRetryPolicy([]codes.Code{codes.OK}, time.Millisecond, time.Second); err == nil {
		t.Errorf("retrying OK was accepted")
	}
}
