//go:build !race

package session_test

// traceUnderRace reports whether the tests run under the race detector,
// which slows client and simulator several times: a replay that must send
// every request of a trace at its pace is given a slower trace there.
const traceUnderRace = false
