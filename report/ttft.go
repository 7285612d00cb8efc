package report

import (
	"strings"
	"time"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// stepTTFT is the time to first token a step's table and a comparison
// show, and whether it is from the schedule: in open loop from each
// request's scheduled send (the user's wait, as the step's latency is),
// from the send otherwise.
func stepTTFT(sc *stats.StreamingStats) (stats.Latency, bool) {
	if l := sc.TTFTScheduled; l != nil && l.Count > 0 {
		return *l, true
	}
	return sc.TTFT, false
}

// stepTableNote is what the text step table's title says of its numbers.
func stepTableNote(cols stepColumns) string {
	if cols.streaming {
		return " (latency and ttft in ms, from the schedule in open loop; queue and compute are Triton's, per request)"
	}
	return " (latency in ms, from the schedule in open loop; queue and compute are Triton's, per request)"
}

// csvScheduleColumns are tritontop's columns of an open-loop run, after
// perf_analyzer's and genai-perf's: the latency, and a decoupled model's
// time to first response, from each request's scheduled send.
const (
	csvScheduledColumns     = "Avg Latency From Schedule,p50 Latency From Schedule,p90 Latency From Schedule,p95 Latency From Schedule,p99 Latency From Schedule"
	csvTTFTScheduledColumns = "Avg Time To First Response From Schedule,p50 Time To First Response From Schedule,p90 Time To First Response From Schedule," +
		"p95 Time To First Response From Schedule,p99 Time To First Response From Schedule"
)

// fromSchedule adds the columns from the schedule that st has.
func (c *csvColumnSet) fromSchedule(st record.Step) {
	cl := st.Client
	c.scheduled = c.scheduled || cl.Scheduled != nil && cl.Scheduled.Count > 0
	c.ttftScheduled = c.ttftScheduled || cl.Streaming != nil && cl.Streaming.TTFTScheduled != nil && cl.Streaming.TTFTScheduled.Count > 0
	c.goodput = c.goodput || hasGoodput(cl.Streaming)
}

// scheduleHeader is the heading of the columns from the schedule, with
// their leading commas.
func (c csvColumnSet) scheduleHeader() string {
	var h string
	if c.goodput {
		h += "," + csvGoodputColumn
	}
	if c.scheduled {
		h += "," + csvScheduledColumns
	}
	if c.ttftScheduled {
		h += "," + csvTTFTScheduledColumns
	}
	return h
}

// writeScheduleCells writes a step's cells under the columns from the
// schedule, empty where the step has none.
func writeScheduleCells(b *strings.Builder, st record.Step, cols csvColumnSet) {
	cells := func(l *stats.Latency) {
		if l == nil || l.Count == 0 {
			b.WriteString(",,,,,")
			return
		}
		for _, d := range []time.Duration{l.Mean, l.P50, l.P90, l.P95, l.P99} {
			b.WriteString("," + us(d))
		}
	}
	if cols.goodput {
		b.WriteString("," + goodputCSVCell(st.Client.Streaming))
	}
	if cols.scheduled {
		cells(st.Client.Scheduled)
	}
	if cols.ttftScheduled {
		var l *stats.Latency
		if sc := st.Client.Streaming; sc != nil {
			l = sc.TTFTScheduled
		}
		cells(l)
	}
}
