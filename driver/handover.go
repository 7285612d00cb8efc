package driver

import "time"

// ResultMaxAgeFor is the ResultMaxAge for a consumer that counts results in
// ticks of the given length: a quarter of the tick, at most
// DefaultResultMaxAge and at least a millisecond. Results then reach the
// consumer within the tick they finished in, so a short tick never sees
// requests in flight with none finished only because their results are
// still waiting in a worker's batch (a tick of 0 or less: the default).
func ResultMaxAgeFor(tick time.Duration) time.Duration {
	if tick <= 0 {
		return DefaultResultMaxAge
	}
	return min(DefaultResultMaxAge, max(tick/4, time.Millisecond))
}
