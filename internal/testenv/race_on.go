//go:build race

package testenv

// Race reports whether the tests were built with the race detector, which
// slows code that walks every byte of a value several times: tests of
// bounds on huge values send smaller ones under it.
const Race = true
