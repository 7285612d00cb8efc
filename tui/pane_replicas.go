package tui

import (
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/stats"
)

// replicasPane is one row per replica of a run over several: whether the
// balancer has it in, the requests it answered in the last tick, their
// p99, Triton's queue time on that server and its GPUs' utilization, and
// a sparkline of its throughput when there is room.
type replicasPane struct {
	b    *board
	w, h int
}

func (p *replicasPane) SetSize(w, h int) { p.w, p.h = w, h }

// bottomLayout is bodyLayout with the models pane and the replicas pane
// across the bottom of the body when the run has several models or
// replicas and no pane has the focus: a row per model and per replica, but
// never more than a third of the body for one of them, and a quarter each
// for both.
func bottomLayout(w, h, focus, gpus, steps, models, replicas int, show shown) [paneCount]rect {
	if (replicas == 0 && models == 0) || focus >= 0 {
		return bodyLayout(w, h, focus, gpus, steps, show)
	}
	share := max(h/3, 4)
	if replicas > 0 && models > 0 {
		share = max(h/4, 4)
	}
	mh, rh := 0, 0
	if models > 0 {
		mh = min(replicaRows(models), share)
	}
	if replicas > 0 {
		rh = min(replicaRows(replicas), share)
	}
	rest := h - mh - rh
	r := bodyLayout(w, rest, focus, gpus, steps, show)
	// A short body's least heights may pass the rows left (80x24 with the
	// errors pane too): what passes is cut, the bottom row first, rather
	// than drawn over the rows below.
	for i := range r {
		if r[i].y+r[i].h > rest {
			r[i].h = max(rest-r[i].y, 0)
		}
		if r[i].h < 2 {
			r[i] = rect{}
		}
	}
	if models > 0 {
		r[focusModels] = rect{0, h - mh - rh, w, mh}
	}
	if replicas > 0 {
		r[focusReplicas] = rect{0, h - rh, w, rh}
	}
	return r
}

// replicaRows is the pane's height for n replicas: its frame, a column
// header and a row each.
func replicaRows(n int) int { return 3 + n }

// replicaRate reads replica i's throughput, for its sparkline.
func replicaRate(i int, url string) metric {
	return func(s *stats.Snapshot) (float64, bool) {
		if i >= len(s.Replicas) || s.Replicas[i].URL != url {
			return 0, false
		}
		return s.Replicas[i].Tick.RequestsPerS, true
	}
}

// Column widths of the pane's numbers.
const (
	replicaStateW = 4
	replicaRateW  = 8
	replicaDurW   = 8
	replicaGPUW   = 5
)

func (p *replicasPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusReplicas
	s := p.b.hist.latest()
	// The charts draw the ticks up to where the wheel scrolled them.
	ch := p.b.charted()
	if s == nil || len(s.Replicas) == 0 {
		return box(st, "Replicas", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	title := "Replicas · " + strconv.Itoa(s.ReplicasUp()) + " of " + strconv.Itoa(len(s.Replicas)) + " in"
	iw := p.w - 4
	nums := 1 + replicaStateW + 1 + replicaRateW + 1 + replicaDurW + 1 + replicaDurW + 1 + replicaGPUW
	urlW := 0
	for i := range s.Replicas {
		urlW = max(urlW, cellWidth(s.Replicas[i].URL))
	}
	urlW = max(7, min(urlW, iw-nums))
	spark := iw - urlW - nums - 2
	if spark < 8 {
		spark = 0
	}
	top := 0.0
	if spark > 0 {
		for i := range s.Replicas {
			top = max(top, maxOver(&ch, replicaRate(i, s.Replicas[i].URL)))
		}
	}
	cell := func(v string, w int) string { return strings.Repeat(" ", max(0, w-cellWidth(v))) + v }
	head := fit("replica", urlW) + " " + cell("", replicaStateW) + " " + cell("req/s", replicaRateW) + " " +
		cell("p99", replicaDurW) + " " + cell("queue", replicaDurW) + " " + cell("gpu", replicaGPUW)
	if spark > 0 {
		head += "  " + "req/s over time"
	}
	lines := []string{st.Label.Render(head)}
	rows := p.h - 3
	for i := range s.Replicas {
		r := &s.Replicas[i]
		if len(lines) == rows && i < len(s.Replicas)-1 {
			lines = append(lines, st.Dim.Render("+"+strconv.Itoa(len(s.Replicas)-i)+" more: tab to this pane"))
			break
		}
		state := st.Good.Render(cell("up", replicaStateW))
		if !r.Up {
			state = st.Bad.Render(cell("down", replicaStateW))
		}
		p99, queue, gpu := st.Dim.Render(cell(missing, replicaDurW)), st.Dim.Render(cell(missing, replicaDurW)), st.Dim.Render(cell(missing, replicaGPUW))
		if r.Tick.Latency.Count > 0 {
			p99 = st.Value.Render(cell(fmtDur(r.Tick.Latency.P99), replicaDurW))
		}
		if r.Server.Available && !r.Server.Reset && r.Server.SuccessCount > 0 {
			queue = st.Value.Render(cell(fmtDur(r.Server.Queue), replicaDurW))
		}
		if u, ok := r.GPUUtilization(); ok {
			gpu = st.Value.Render(cell(fmtPct(u), replicaGPUW))
		}
		line := fit(r.URL, urlW) + " " + state + " " + st.Value.Render(cell(fmtRate(r.Tick.RequestsPerS), replicaRateW)) +
			" " + p99 + " " + queue + " " + gpu
		if spark > 0 {
			line += "  " + sparkline(st.Series[0], &ch, spark, replicaRate(i, r.URL), top)
		}
		lines = append(lines, line)
	}
	return box(st, title, focused, p.w, p.h, lines)
}
