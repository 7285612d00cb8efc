//go:build !race

package main

// raceEnabled reports whether tests run under the race detector, whose own
// memory grows with the run and hides the program's.
const raceEnabled = false
