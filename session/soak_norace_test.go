//go:build !race

package session_test

// soakRaceEnabled reports whether tests run under the race detector, whose
// own memory grows with the run and hides the program's.
const soakRaceEnabled = false
