package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// cpuPane sets the server's CPU beside the client host's and tritontop's
// own, in one unit (a share of that machine's cores) and with labels that
// say what each covers, so that a client-bound run shows itself; and it
// shows the client host's own GPUs when it has any.
type cpuPane struct {
	b    *board
	w, h int
}

func (p *cpuPane) SetSize(w, h int) { p.w, p.h = w, h }

// hostNearFull is the client host's CPU share from which every latency on
// screen is bent by it.
const hostNearFull = 0.9

func serverCPU(s *stats.Snapshot) (float64, bool) {
	return s.Metrics.CPUUtilization, s.Metrics.Available && s.Metrics.HasCPU
}

func hostCPU(s *stats.Snapshot) (float64, bool) { return s.System.HostCPU, s.System.NumCPU > 0 }

// processCPU is tritontop's CPU as a share of the cores it may run on.
func processCPU(s *stats.Snapshot) (float64, bool) {
	if s.System.NumCPU <= 0 {
		return 0, false
	}
	return s.System.ProcessCPU / float64(s.System.NumCPU), true
}

func (p *cpuPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusCPU
	s := p.b.hist.latest()
	// The charts draw the ticks up to where the wheel scrolled them.
	ch := p.b.charted()
	if s == nil {
		return box(st, "CPU", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	iw, rows := p.w-4, p.h-2
	sys := &s.System
	shared := p.b.header.SharedProcess
	// Local GPUs take a line of their own when there is a row for it, and
	// otherwise a few cells of the client host's line.
	gpuLine := len(sys.LocalGPUs) > 0 && rows >= 4
	self := "tritontop"
	if shared {
		self = "tritontop+sim"
	}
	label := max(len(self), len("client host")) + 1
	if gpuLine {
		label = max(label, len("client GPU")+1)
	}
	// row is a labelled value and what it covers, with its history on the
	// 0–100 % scale in the cells left.
	row := func(name string, v string, paint Paint, note string, m metric) string {
		line := st.Label.Render(fit(name, label)) + paint.Render(padLeft(v, 4))
		if note != "" {
			line += " " + note
		}
		if m != nil {
			if sw := iw - cellWidth(line) - 1; sw >= 4 {
				line += " " + sparkline(st.Series[0], &ch, sw, m, 1)
			}
		}
		return line
	}
	var lines []string
	if !shared {
		// Triton's nv_cpu_utilization is host-wide; the simulator's is
		// its own process.
		note := st.Dim.Render("host-wide")
		if p.b.header.Simulated {
			note = st.Dim.Render("sim process")
		}
		switch v, ok := serverCPU(s); {
		case ok:
			lines = append(lines, row("server", fmtPct(v), st.Value, note, serverCPU))
		case s.Metrics.Available:
			lines = append(lines, st.Label.Render(fit("server", label))+st.Dim.Render("n/a (no nv_cpu_utilization)"))
		default:
			lines = append(lines, st.Label.Render(fit("server", label))+st.Dim.Render("n/a (no metrics)"))
		}
	}
	if sys.NumCPU > 0 {
		paint, note := st.Value, "all processes"
		if sys.HostCPUs != "" {
			// tritontop may run on these cores only: they are its host.
			note = "all processes on cores " + sys.HostCPUs
		}
		if sys.HostCPU >= hostNearFull {
			paint, note = st.Warn, st.Warn.Render("near full")
			if sys.HostCPUs != "" {
				note = st.Warn.Render("cores " + sys.HostCPUs + " near full")
			}
		}
		if len(sys.LocalGPUs) > 0 && !gpuLine {
			note += "  " + st.Label.Render("GPU ") + localGPUUtil(st, sys.LocalGPUs)
		}
		lines = append(lines, row("client host", fmtPct(sys.HostCPU), paint, note, hostCPU))
		cores := strconv.FormatFloat(sys.ProcessCPU, 'f', 2, 64) + " of " + strconv.Itoa(sys.NumCPU)
		own := processNote(st, cores, sys.CPUPerRequest, iw-label-5)
		v, _ := processCPU(s)
		lines = append(lines, row(self, fmtPct(v), st.Value, own, processCPU))
	} else {
		lines = append(lines, st.Label.Render(fit("client host", label))+st.Dim.Render("n/a (not measured)"))
	}
	if shared && rows > len(lines) {
		lines = append(lines, st.Dim.Render("client and sim share one process"))
	}
	if gpuLine {
		lines = append(lines, st.Label.Render(fit("client GPU", label))+localGPUs(st, sys.LocalGPUs))
	}
	if left := rows - len(lines); left >= 5 && sys.NumCPU > 0 {
		c := newChart(fmtAxisPct, "", processCPU, hostCPU)
		c.top = 1
		lines = append(lines, st.Series[0].Render("█")+" "+self+"  "+st.Series[1].Render("▓")+" client host")
		lines = append(lines, c.draw(st, &ch, iw, left-1)...)
	}
	return box(st, "CPU", focused, p.w, p.h, lines)
}

// processNote is tritontop's cores and CPU time per request, in the words
// that fit in w cells, or the cores alone: a truncated duration would read
// as a different one.
func processNote(st *Styles, cores string, perRequest time.Duration, w int) string {
	note := st.Value.Render(cores) + " cores"
	if perRequest <= 0 {
		return note
	}
	d := st.Value.Render(fmtDur(perRequest.Round(time.Microsecond / 10)))
	for _, n := range [...]string{note + " · " + d + " per request", note + " · " + d + "/req", note + " " + d + "/req"} {
		if cellWidth(n) <= w {
			return n
		}
	}
	return note
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
