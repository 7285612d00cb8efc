package tui

import (
	"strconv"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// cpuPane sets the server's CPU beside tritontop's own cost, so that a
// client-bound run shows itself.
type cpuPane struct {
	b    *board
	w, h int
}

func (p *cpuPane) SetSize(w, h int) { p.w, p.h = w, h }

func serverCPU(s *stats.Snapshot) (float64, bool) {
	return s.Metrics.CPUUtilization, s.Metrics.Available && s.Metrics.HasCPU
}

func processCPU(s *stats.Snapshot) (float64, bool) { return s.System.ProcessCPU, true }

func (p *cpuPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusCPU
	s := p.b.hist.latest()
	if s == nil {
		return box(st, "CPU", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	iw := p.w - 4
	const label = 10
	sys := &s.System
	server := st.Label.Render(fit("server", label))
	if v, ok := serverCPU(s); ok {
		server += st.Value.Render(padLeft(fmtPct(v), 4))
		if sw := iw - label - 5; sw >= 4 {
			server += " " + sparkline(st.Series[0], p.b.hist, sw, serverCPU, 1)
		}
	} else if s.Metrics.Available {
		server += st.Dim.Render("n/a (no nv_cpu_utilization)")
	} else {
		server += st.Dim.Render("n/a (no metrics)")
	}
	self := st.Label.Render(fit("tritontop", label)) +
		st.Value.Render(strconv.FormatFloat(sys.ProcessCPU, 'f', 2, 64)) + " cores"
	if sys.CPUPerRequest > 0 {
		per := " per request"
		if iw < 40 {
			per = "/req"
		}
		self += "  " + st.Value.Render(fmtDur(sys.CPUPerRequest.Round(time.Microsecond/10))) + per
	}
	host := st.Label.Render(fit("client", label)) + st.Value.Render(fmtPct(sys.HostCPU))
	if sys.NumCPU > 0 {
		host += " of " + strconv.Itoa(sys.NumCPU) + " cores"
	}
	lines := []string{server, self, host}
	if p.h-2 > len(lines) {
		lines = append(lines, st.Label.Render(fit("tritontop", label))+
			sparkline(st.Series[1], p.b.hist, iw-label, processCPU, 0))
	}
	return box(st, "CPU", focused, p.w, p.h, lines)
}
