package tui

import "github.com/tritontop/tritontop/stats"

// paneTTFT is the time to first response the streaming pane shows, and
// whether it is from the schedule: in open loop from each request's
// scheduled send (what a user of the service waits, as the latency from
// the schedule), from the send in closed loop.
func paneTTFT(sc *stats.StreamingStats) (*stats.Latency, bool) {
	if l := sc.TTFTScheduled; l != nil && l.Count > 0 {
		return l, true
	}
	return &sc.TTFT, false
}

// paneLatency is the request latency the streaming pane shows: from the
// schedule in open loop, from the send otherwise.
func paneLatency(ws *stats.ClientStats) *stats.Latency {
	if l := ws.Scheduled; l != nil && l.Count > 0 {
		return l
	}
	return &ws.Latency
}

// fromWhere is the streaming pane's title's end: where its times are
// measured from.
func fromWhere(ws *stats.ClientStats) string {
	if sc := ws.Streaming; sc != nil {
		if _, sched := paneTTFT(sc); sched {
			return " · from schedule"
		}
	}
	if ws.Scheduled != nil && ws.Scheduled.Count > 0 {
		return " · from schedule"
	}
	return " · from send"
}
