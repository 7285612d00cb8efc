//go:build !linux

package driver

import "time"

// startHostStalls probes nothing where there is no nanosleep to time.
func startHostStalls() func() (int, time.Duration) {
	return func() (int, time.Duration) { return 0, 0 }
}
