package report

import (
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// writePlanned adds a load plan's mean target over the tick (--stages) to a
// progress line: "plan 249.9/s" or "plan 3.5"; nothing without a plan.
func writePlanned(b *strings.Builder, l stats.Load) {
	if l.Planned <= 0 || l.Drain {
		return
	}
	b.WriteString("  plan " + strconv.FormatFloat(l.Planned, 'f', 1, 64))
	if l.Mode == load.Rate {
		b.WriteString("/s")
	}
}
