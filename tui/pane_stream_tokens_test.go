package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tritontop/tritontop/stats"
)

// TestResponsesSummaryTokens: where the server counted output tokens apart
// from responses (several tokens a response), the pane says tokens per
// second, and responses per second beside them when there is room; where a
// response is a token, it reads as before.
func TestResponsesSummaryTokens(t *testing.T) {
	st := NewStyles(false)
	sc := &stats.StreamingStats{Requests: 4, Responses: 40, ResponsesPerS: 40, OutputTokens: 160, OutputTokensPerS: 160,
		PerRequest: stats.Counts{Count: 4, Mean: 10, P50: 10, Max: 10}}
	if got := ansi.Strip(responsesSummary(st, sc, 60)); !strings.Contains(got, "tokens 160/s") || !strings.Contains(got, "40.0 resp/s") {
		t.Errorf("wide: %q", got)
	}
	if got := ansi.Strip(responsesSummary(st, sc, 12)); got != "160 tok/s" {
		t.Errorf("narrow: %q", got)
	}
	sc.OutputTokens, sc.OutputTokensPerS = 40, 40
	if got := ansi.Strip(responsesSummary(st, sc, 60)); strings.Contains(got, "tok") || !strings.Contains(got, "responses 40.0/s") {
		t.Errorf("a token a response: %q", got)
	}
}
