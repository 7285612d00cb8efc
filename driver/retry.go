package driver

import (
	"time"

	"google.golang.org/grpc/codes"
)

// maxBackoff caps the doubling of the retry backoff.
const maxBackoff = 5 * time.Second

// retryable reports whether a request that failed with code may succeed if
// sent again: transient server or transport trouble, not a bad request.
func retryable(code codes.Code) bool {
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted,
		codes.Aborted, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

// backoff is the wait before retry number attempt+1: base, doubled for each
// earlier retry, at most maxBackoff.
func backoff(base time.Duration, attempt int) time.Duration {
	if attempt > 30 {
		return maxBackoff
	}
	return min(base<<attempt, maxBackoff)
}
