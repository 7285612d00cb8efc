package main

import (
	"fmt"
	"math"
	"time"
)

// maxStartAhead bounds how far ahead --start-at may be: workers are
// started together for a test about to run, not scheduled for next year.
const maxStartAhead = 24 * time.Hour

// minRate is the least request rate, in requests per second, of
// --request-rate, a --request-rate-range level or a model's rate: one
// request every 1000 s, already longer than any measurement window.
const minRate = 1e-3

// wholeRange refuses a concurrency range with a fractional START, END or
// STEP, which would otherwise be truncated to levels the user did not ask
// for.
func wholeRange(flag, text string, vals ...float64) error {
	for _, v := range vals {
		if v != math.Trunc(v) {
			return fmt.Errorf("bad %s %q: %v is not a whole number; concurrency levels are counts of requests", flag, text, v)
		}
	}
	return nil
}
