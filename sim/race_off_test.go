//go:build !race

package sim

// raceEnabled reports whether tests run under the race detector, whose
// runtime maps terabytes of shadow memory: no address-space cap fits it,
// so the capped simulator process is built without it.
const raceEnabled = false
