package tui

import (
	"strings"
)

// errorsPane counts errors by code, with the latest message of each.
type errorsPane struct {
	b    *board
	w, h int
}

func (p *errorsPane) SetSize(w, h int) { p.w, p.h = w, h }

func (p *errorsPane) View() string {
	st := p.b.common.Styles
	focused := p.b.ui.focus == focusErrors
	s := p.b.hist.latest()
	if s == nil {
		return box(st, "Errors", focused, p.w, p.h, []string{st.Dim.Render("waiting for data")})
	}
	ws, wname := p.b.windowStats(s)
	if s.Run.Errors == 0 {
		lines := []string{st.Good.Render("none")}
		if s.Run.Retries > 0 {
			lines = append(lines, retriesLine(st, ws.Retries, ws.Requests+ws.Cancelled, wname, s.Run.Retries))
		}
		return box(st, "Errors", focused, p.w, p.h, lines)
	}
	var lines []string
	codes := ws.ErrorsByCode
	if ws.Errors == 0 {
		lines = append(lines, st.Dim.Render("none in "+wname+"; ")+st.Bad.Render(fmtInt(s.Run.Errors))+" in the run")
		codes = s.Run.ErrorsByCode
	} else {
		share := 0.0
		if ws.Requests > 0 {
			share = float64(ws.Errors) / float64(ws.Requests)
		}
		lines = append(lines, st.Bad.Render(fmtInt(ws.Errors))+" errors ("+fmtPct(share)+") in "+wname+
			st.Dim.Render("  run "+fmtInt(s.Run.Errors)))
	}
	if s.Run.Retries > 0 {
		lines = append(lines, retriesLine(st, ws.Retries, ws.Requests+ws.Cancelled, wname, s.Run.Retries))
	}
	for _, c := range codes {
		msg := strings.ReplaceAll(c.Message, "\n", " ")
		lines = append(lines, st.Label.Render(c.Code)+" "+st.Value.Render(fmtInt(c.Count))+"  "+st.Dim.Render(msg))
	}
	return box(st, "Errors", focused, p.w, p.h, lines)
}

// retriesLine says how many sends in the window were retries, as a share
// of the requests (the extra load the server served: "+24%"), and the
// run's count.
func retriesLine(st *Styles, retries, requests int64, wname string, run int64) string {
	share := ""
	if requests > 0 {
		share = " (+" + fmtPct(float64(retries)/float64(requests)) + ")"
	}
	return st.Label.Render("retries ") + st.Value.Render(fmtInt(retries)) + share + " in " + wname +
		st.Dim.Render("  run "+fmtInt(run))
}
