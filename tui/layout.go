package tui

import "strings"

// The panes in focus (tab) order.
const (
	focusThroughput = iota
	focusLatency
	focusServer
	focusGPU
	focusCPU
	focusErrors
	focusSweep
	focusReplicas
	focusModels
	paneCount
)

// rect is a pane's place in the body.
type rect struct{ x, y, w, h int }

// shown says which panes have something to show: the Errors pane only once
// a request failed (until then it would say "none" in rows better used by
// the charts), the Sweep pane only in a stepped run.
type shown [paneCount]bool

// allPanes shows the five panes always shown, and the Errors and Sweep
// panes as asked.
func allPanes(errors, sweep bool) shown {
	return shown{true, true, true, true, true, errors, sweep}
}

// Layout sizes.
const (
	// chartRowsWanted is how many rows the two top charts take on a tall
	// screen before the server, GPU and CPU panes get the rest for their
	// own histories.
	chartRowsWanted = 22
	// serverRows is the server pane's height with sparklines.
	serverRows = 7
	// sweepRows is the bottom row's least height in a stepped run: the
	// sweep's latency–throughput plot needs it.
	sweepRows = 9
)

// bodyLayout places the panes in a w×h body. Wide screens (≥ 100 columns
// and ≥ 26 rows) follow the design sketch: throughput and latency on top,
// the server across, GPU, CPU (and errors, sweep) below; rows past what the
// top charts need go to the server, GPU and CPU panes. Narrow ones stack
// GPU and CPU, then errors and sweep, under the server. With a focused
// pane, it alone fills the body.
// A pipeline's server pane has a row per composing model (steps): on a
// wide screen it takes them from the top charts, so that its history
// still shows.
func bodyLayout(w, h, focus, gpus, steps int, show shown) [paneCount]rect {
	var r [paneCount]rect
	if focus >= 0 && focus < paneCount {
		r[focus] = rect{0, 0, w, h}
		return r
	}
	left := w / 2
	if w >= 100 && h >= 26 {
		left = w * 45 / 100
		server := serverRows + min(steps, 6)
		bottom := min(h/3, max(6, 2+2*gpus))
		if show[focusSweep] {
			bottom = max(bottom, sweepRows)
		}
		top := h - server - bottom
		if extra := top - chartRowsWanted; extra > 0 {
			// The charts keep a fifth of the spare rows; the server's
			// and the bottom row's histories share the rest.
			s, b := extra*2/5, extra*2/5
			server, bottom, top = server+s, bottom+b, top-s-b
		}
		r[focusThroughput] = rect{0, 0, left, top}
		r[focusLatency] = rect{left, 0, w - left, top}
		r[focusServer] = rect{0, top, w, server}
		// The bottom row: GPU and CPU, then the sweep and the errors when
		// shown, by weight.
		order := [...]int{focusGPU, focusCPU, focusSweep, focusErrors}
		weight := [paneCount]int{focusGPU: 36, focusCPU: 34, focusSweep: 30, focusErrors: 30}
		total := 0
		for _, p := range order {
			if show[p] {
				total += weight[p]
			}
		}
		x, acc := 0, 0
		last := focusCPU
		for _, p := range order {
			if show[p] {
				last = p
			}
		}
		for _, p := range order {
			if !show[p] {
				continue
			}
			acc += weight[p]
			end := w * acc / total
			if p == last {
				end = w
			}
			r[p] = rect{x, top + server, end - x, bottom}
			x = end
		}
		return r
	}
	// Short bodies (80x24 with the full help open) take rows from the
	// server and the GPU/CPU row before the charts' row goes below five.
	server, mid, tail := serverRows, 5, 0
	if show[focusErrors] || show[focusSweep] {
		tail = 4
	}
	short := max(0, 5+server+mid+tail-h)
	server -= min(short, 2)
	mid -= min(max(0, short-2), 1)
	top := max(5, h-server-mid-tail)
	r[focusThroughput] = rect{0, 0, left, top}
	r[focusLatency] = rect{left, 0, w - left, top}
	r[focusServer] = rect{0, top, w, server}
	r[focusGPU] = rect{0, top + server, left, mid}
	r[focusCPU] = rect{left, top + server, w - left, mid}
	y := top + server + mid
	switch {
	case show[focusErrors] && show[focusSweep]:
		r[focusErrors] = rect{0, y, left, tail}
		r[focusSweep] = rect{left, y, w - left, tail}
	case show[focusErrors]:
		r[focusErrors] = rect{0, y, w, tail}
	case show[focusSweep]:
		r[focusSweep] = rect{0, y, w, tail}
	}
	return r
}

// nextFocus moves the focus step places (1 forward, -1 back) through the
// shown panes and "no focus" (-1), which form one cycle.
func nextFocus(focus, step int, show shown) int {
	for range paneCount + 1 {
		focus = (focus+1+step+paneCount+1)%(paneCount+1) - 1
		if focus < 0 || show[focus] {
			return focus
		}
	}
	return -1
}

// nthPane is the n-th pane shown (from 1), in focus order; -1 when fewer
// are shown.
func nthPane(n int, show shown) int {
	for p := range paneCount {
		if show[p] {
			if n--; n == 0 {
				return p
			}
		}
	}
	return -1
}

// compose paints pane views (each exactly its rect's size) into h lines of
// w cells. Rows no pane covers stay blank, and panes past the body's bottom
// are cut.
func compose(w, h int, rects []rect, views []string) []string {
	type piece struct {
		x, w int
		line string
	}
	rows := make([][]piece, h)
	for i, r := range rects {
		if r.w <= 0 || r.h <= 0 {
			continue
		}
		for j, line := range strings.Split(views[i], "\n") {
			if y := r.y + j; y < h && j < r.h {
				rows[y] = append(rows[y], piece{r.x, r.w, line})
			}
		}
	}
	out := make([]string, h)
	for y, ps := range rows {
		// Panes are not in left-to-right order on every row (the sweep
		// sits left of the errors): sort the few pieces by x.
		for i := 1; i < len(ps); i++ {
			for j := i; j > 0 && ps[j].x < ps[j-1].x; j-- {
				ps[j], ps[j-1] = ps[j-1], ps[j]
			}
		}
		var b strings.Builder
		x := 0
		for _, p := range ps {
			if p.x > x {
				b.WriteString(strings.Repeat(" ", p.x-x))
			}
			// Panes draw exactly their size, except below a frame's
			// minimum (a tiny terminal); fit keeps the row whole then.
			b.WriteString(fit(p.line, p.w))
			x = p.x + p.w
		}
		if x < w {
			b.WriteString(strings.Repeat(" ", w-x))
		}
		out[y] = b.String()
	}
	return out
}
