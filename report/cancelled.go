package report

import (
	"fmt"

	"github.com/tritontop/tritontop/stats"
)

// cancelledNote says how many requests were cancelled (still in flight
// when the run stopped and --drain ran out, or stopped by hand), which no
// number of the summary counts; empty without one. A trace of long LLM
// prompts is where it matters: its last requests may take longer than the
// drain.
func cancelledNote(c stats.ClientStats) string {
	if c.Cancelled <= 0 {
		return ""
	}
	return fmt.Sprintf("cancelled: %d requests still in flight when the run stopped (a longer --drain lets them finish); no number here counts them", c.Cancelled)
}
