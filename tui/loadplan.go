package tui

import (
	"strconv"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// planText is what the load line adds under a load plan (--stages): the
// plan's level over the last tick against what was achieved in it, the
// target above being the stage's (where the ramp is heading); "" without a
// plan.
func planText(st *Styles, s *stats.Snapshot) string {
	if s == nil || s.Load.Planned <= 0 || s.Load.Mode == load.Mixed || s.Load.Drain {
		return ""
	}
	if s.Load.Mode == load.Rate {
		return "  " + st.Label.Render("plan ") + st.Value.Render(fmtRate(s.Load.Planned)+"/s") +
			st.Label.Render(" sent ") + st.Value.Render(fmtRate(s.Tick.RequestsPerS+float64(s.Tick.Cancelled)/max(s.Interval.Seconds(), 1e-9))+"/s") +
			stageText(st, s)
	}
	return "  " + st.Label.Render("plan ") + st.Value.Render(strconv.FormatFloat(s.Load.Planned, 'f', 1, 64)) + stageText(st, s)
}

// stageText names the stage under way, counting from 1.
func stageText(st *Styles, s *stats.Snapshot) string {
	return st.Label.Render(" stage ") + st.Value.Render(strconv.Itoa(s.Load.Step+1))
}

// planText is the load line's plan part, from the latest snapshot.
func (p *headerPane) planText() string {
	if p.b.hist == nil {
		return ""
	}
	return planText(p.b.common.Styles, p.b.hist.latest())
}
