package sim

import (
	"strconv"

	"github.com/tritontop/tritontop/triton/kserve"
)

// What the simulator's messages echo of a request is bounded: each value
// by textsafe.Bound (Triton's own words for a value of everyday size), and
// these.
const (
	// maxListed is how many names a message lists (Triton lists all).
	maxListed = 16
	// maxDimsShown is how many dims of a shape a message writes.
	maxDimsShown = 16
)

// dimsText is a request's shape as Triton writes it ("[1,16]"), its first
// maxDimsShown dims and their count when it has more.
func dimsText(shape []int64) string {
	if len(shape) <= maxDimsShown {
		return kserve.FormatDims(shape)
	}
	head := kserve.FormatDims(shape[:maxDimsShown])
	return head[:len(head)-1] + ",… (" + strconv.Itoa(len(shape)) + " dims)]"
}
