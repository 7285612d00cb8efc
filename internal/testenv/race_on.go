//go:build race

package testenv

// Race reports whether the tests were built with the race detector, which
// slows the client and the simulator several times (timing tests run their
// schedules slower under it, with the same assertions, and tests of bounds
// on huge values send smaller ones) and maps terabytes of shadow memory (no
// address-space cap fits a process built with it).
const Race = true
