package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// cpuPane sets the server's CPU beside tritontop's own cost, so that a
// client-bound run shows itself, and shows the client host's own GPUs when
// it has any.
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
	iw, rows := p.w-4, p.h-2
	sys := &s.System
	// With the simulator in this process, the process's CPU is client and
	// server together; the label says so.
	self := "tritontop"
	if p.b.header.SharedProcess {
		self = "tritontop+sim"
	}
	// Local GPUs take a line of their own when there is a row for it, and
	// otherwise a few cells of the client line.
	gpuLine := len(sys.LocalGPUs) > 0 && rows >= 4
	label := len(self) + 1
	if gpuLine {
		label = max(label, len("client GPU")+1)
	}
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
	cores := strconv.FormatFloat(sys.ProcessCPU, 'f', 2, 64)
	own := st.Label.Render(fit(self, label)) + st.Value.Render(cores) + " cores"
	if sys.CPUPerRequest > 0 {
		d := fmtDur(sys.CPUPerRequest.Round(time.Microsecond / 10))
		// The cost per request in the words that fit, or not at all: a
		// truncated duration would read as a different one.
		used := label + len(cores) + len(" cores") + cellWidth(d)
		switch {
		case iw >= 40:
			own += "  " + st.Value.Render(d) + " per request"
		case used+len("  /req") <= iw:
			own += "  " + st.Value.Render(d) + "/req"
		case used+len(" /req") <= iw:
			own += " " + st.Value.Render(d) + "/req"
		}
	}
	host := st.Label.Render(fit("client", label)) + st.Value.Render(fmtPct(sys.HostCPU))
	if sys.NumCPU > 0 {
		host += " of " + strconv.Itoa(sys.NumCPU) + " cores"
	}
	lines := []string{server, own, host}
	switch {
	case gpuLine:
		lines = append(lines, st.Label.Render(fit("client GPU", label))+localGPUs(st, sys.LocalGPUs))
	case len(sys.LocalGPUs) > 0:
		lines[2] += "  " + st.Label.Render("GPU ") + localGPUUtil(st, sys.LocalGPUs)
	}
	if rows > len(lines) {
		lines = append(lines, st.Label.Render(fit(self, label))+
			sparkline(st.Series[1], p.b.hist, iw-label, processCPU, 0))
	}
	return box(st, "CPU", focused, p.w, p.h, lines)
}

// localGPUs is the client GPUs' line: utilization and memory for one GPU,
// utilization by index for several; a gauge not reported is a dash.
func localGPUs(st *Styles, gpus []stats.GPU) string {
	if len(gpus) > 1 {
		parts := make([]string, len(gpus))
		for i := range gpus {
			parts[i] = strconv.Itoa(i) + " " + gpuPct(st, &gpus[i])
		}
		return strings.Join(parts, "  ")
	}
	g := &gpus[0]
	mem := ""
	if g.HasMemory {
		mem = st.Value.Render(fmtGB(g.MemoryUsed)) + "/" + fmtGB(g.MemoryTotal) + " GB"
	}
	return join(gpuPct(st, g), mem)
}

// localGPUUtil is the client GPUs' utilizations, space-separated.
func localGPUUtil(st *Styles, gpus []stats.GPU) string {
	parts := make([]string, len(gpus))
	for i := range gpus {
		parts[i] = gpuPct(st, &gpus[i])
	}
	return strings.Join(parts, " ")
}

// gpuPct is a GPU's utilization, or a dash when not reported.
func gpuPct(st *Styles, g *stats.GPU) string {
	if !g.HasUtilization {
		return st.Dim.Render(missing)
	}
	return st.Value.Render(fmtPct(g.Utilization))
}
