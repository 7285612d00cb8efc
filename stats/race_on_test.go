//go:build race

package stats

// raceEnabled reports whether tests run under the race detector, which
// slows every read several times over.
const raceEnabled = true
