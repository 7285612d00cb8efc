package driver

import (
	"fmt"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
)

// DefaultRetryMaxBackoff caps the doubling of the retry backoff.
const DefaultRetryMaxBackoff = 5 * time.Second

// DefaultRetryCodes are the codes a failed request is retried on when
// Options.RetryCodes is nil: UNAVAILABLE (the server or a proxy could not
// take the request: nothing ran) and RESOURCE_EXHAUSTED (Triton's queue was
// full: nothing ran). DEADLINE_EXCEEDED is left out because the request may
// still be running on the server, so a retry adds load the server is
// already short of and hides the latency the test is there to see; INTERNAL
// because Triton answers it for a model's own failure, which a retry does
// not cure but would hide.
func DefaultRetryCodes() []codes.Code {
	return []codes.Code{codes.Unavailable, codes.ResourceExhausted}
}

// retryPolicy is which failures are retried and how long to wait first.
type retryPolicy struct {
	codes     uint32 // bit c set: code c is retried
	base, cap time.Duration
}

// newRetryPolicy builds the policy of Options; nil codes take the default.
func newRetryPolicy(list []codes.Code, base, ceiling time.Duration) (retryPolicy, error) {
	if list == nil {
		list = DefaultRetryCodes()
	}
	p := retryPolicy{base: base, cap: ceiling}
	for _, c := range list {
		if c == codes.OK || c == codes.Canceled || c > 31 {
			return retryPolicy{}, fmt.Errorf("driver: code %v cannot be retried", c)
		}
		p.codes |= 1 << c
	}
	if p.cap < p.base {
		p.cap = p.base
	}
	return p, nil
}

// retryable reports whether a request that failed with code is sent again.
func (p retryPolicy) retryable(code codes.Code) bool {
	return code < 32 && p.codes&(1<<code) != 0
}

// backoff is the wait before retry number attempt+1: base, doubled for each
// earlier retry, at most the cap, then jittered by u in [0, 1) over its
// upper half ("equal jitter"), so that clients failed at once do not retry
// in lockstep and the wait still grows with every retry.
func (p retryPolicy) backoff(attempt int, u float64) time.Duration {
	d := p.cap
	if attempt <= 30 {
		d = min(p.base<<attempt, p.cap)
	}
	return d/2 + time.Duration(u*float64(d/2))
}

// jitter draws the jitter of a retry's backoff.
func jitter() float64 { return rand.Float64() }
