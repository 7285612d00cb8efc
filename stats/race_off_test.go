//go:build !race

package stats

// raceEnabled reports whether tests run under the race detector, which
// slows the client and the simulator several times: the timing tests then
// run their schedules slower, with the same assertions.
const raceEnabled = false
