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
	paneCount
)

// rect is a pane's place in the body.
type rect struct{ x, y, w, h int }

// bodyLayout places the panes in a w×h body. Wide screens (≥ 100 columns
// and ≥ 26 rows) follow the design sketch: throughput and latency on top,
// the server across, GPU, CPU and errors below. Narrow ones stack the
// bottom row in two; the top row always takes the spare rows for its
// charts. With a focused pane, it alone fills the body.
func bodyLayout(w, h, focus, gpus int) [paneCount]rect {
	var r [paneCount]rect
	if focus >= 0 && focus < paneCount {
		r[focus] = rect{0, 0, w, h}
		return r
	}
	left := w / 2
	if w >= 100 && h >= 26 {
		left = w * 45 / 100
		const server = 7
		bottom := min(h/3, max(6, 2+2*gpus))
		top := h - server - bottom
		r[focusThroughput] = rect{0, 0, left, top}
		r[focusLatency] = rect{left, 0, w - left, top}
		r[focusServer] = rect{0, top, w, server}
		gw, cw := w*36/100, w*30/100
		r[focusGPU] = rect{0, top + server, gw, bottom}
		r[focusCPU] = rect{gw, top + server, cw, bottom}
		r[focusErrors] = rect{gw + cw, top + server, w - gw - cw, bottom}
		return r
	}
	// Short bodies (80x24 with the full help open) take rows from the
	// server and the GPU/CPU row before the charts' row goes below five.
	server, mid, errs := 6, 5, 4
	short := max(0, 5+server+mid+errs-h)
	server -= min(short, 1)
	mid -= min(max(0, short-1), 1)
	top := max(5, h-server-mid-errs)
	r[focusThroughput] = rect{0, 0, left, top}
	r[focusLatency] = rect{left, 0, w - left, top}
	r[focusServer] = rect{0, top, w, server}
	r[focusGPU] = rect{0, top + server, left, mid}
	r[focusCPU] = rect{left, top + server, w - left, mid}
	r[focusErrors] = rect{0, top + server + mid, w, errs}
	return r
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
		// Panes on a row are laid left to right in rect order already.
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
