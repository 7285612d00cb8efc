package report

import (
	"strings"
	"testing"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// TestCancelledNote: a run that stopped with requests in flight says how
// many were cancelled; one without says nothing of it.
func TestCancelledNote(t *testing.T) {
	s := record.Summary{Client: stats.ClientStats{Requests: 4, Cancelled: 60}}
	if n := strings.Join(runNotes(s), "\n"); !strings.Contains(n, "cancelled: 60 requests still in flight when the run stopped") {
		t.Errorf("notes: %q", n)
	}
	s.Client.Cancelled = 0
	if n := strings.Join(runNotes(s), "\n"); strings.Contains(n, "cancelled") {
		t.Errorf("notes without a cancellation: %q", n)
	}
}
