package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/stats"
)

var (
	stepRowRe  = regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	stepCellRe = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

// stepFromTicks is a step's figures recomputed from the run file's ticks
// of its span (FirstSeq to LastSeq, the drain left out): throughput over
// the time load was applied, latency percentiles from the merged tick
// histograms, and Triton's queue time as Σ Δns / Σ Δcount (each tick's
// average weighted by its successes, late reads included).
type stepFromTicks struct {
	inferPerS float64
	lat       stats.Latency
	// sched is the latency from the schedule (open loop), ok when any
	// tick had it.
	sched   stats.Latency
	schedOK bool
	queue   time.Duration
}

func recomputeStep(t *testing.T, snaps []stats.Snapshot, first, last int) stepFromTicks {
	t.Helper()
	var inf float64
	var d time.Duration
	var m, sm stats.LatencyMerge
	var qns float64
	var qn int64
	addServer := func(sv *stats.ServerStats) {
		if sv != nil && sv.Available && !sv.Reset && sv.SuccessCount > 0 {
			qns += float64(sv.Queue) * float64(sv.SuccessCount)
			qn += sv.SuccessCount
		}
	}
	for _, s := range snaps {
		if s.Seq < first || s.Seq > last || s.Load.Drain {
			continue
		}
		inf += float64(s.Tick.Inferences)
		td := s.Tick.Duration
		if td <= 0 {
			td = s.Interval - s.Paused
		}
		d += td
		m.Add(s.Tick.Latency, s.Histogram)
		if sc := s.Tick.Scheduled; sc != nil {
			sm.Add(*sc, s.ScheduledHistogram)
		}
		addServer(&s.Server)
		addServer(s.ServerLate)
	}
	out := stepFromTicks{inferPerS: inf / d.Seconds()}
	out.lat, _ = m.Latency()
	out.sched, _ = sm.Latency()
	out.schedOK = sm.Count() > 0
	if qn > 0 {
		out.queue = time.Duration(qns / float64(qn))
	}
	return out
}

// TestHTMLStepRowsFromRunFile: the HTML report's step rows, the CSV rows
// and the summary's steps show each step's throughput, latency percentiles
// and queue time, and each equals the value recomputed from the run file's
// ticks of that step, to the precision each prints.
func TestHTMLStepRowsFromRunFile(t *testing.T) {
	for _, name := range []string{"sweep", "c16", "rate"} {
		t.Run(name, func(t *testing.T) {
			run := frozenRun(t, name)
			sum := SummarizeRun(run)
			page := renderHTML(t, HTMLRun{Label: name, File: name + ".jsonl", Run: run})
			rows := stepRowRe.FindAllStringSubmatch(page, -1)
			var stepRows [][]string
			for _, r := range rows {
				cells := stepCellRe.FindAllStringSubmatch(r[1], -1)
				if len(cells) < 8 {
					continue // the header, or another table's row
				}
				var texts []string
				for _, c := range cells {
					texts = append(texts, c[1])
				}
				stepRows = append(stepRows, texts)
			}
			for i, st := range sum.Steps {
				if len(st.Diagnosis) > 0 && !strings.Contains(page, "(at the step&#39;s end)") {
					t.Errorf("step %d's finding is shown without its span", i+1)
				}
			}
			if len(stepRows) != len(sum.Steps) {
				t.Fatalf("%d HTML step rows, %d steps", len(stepRows), len(sum.Steps))
			}
			var b bytes.Buffer
			if err := WriteCSV(&b, run); err != nil {
				t.Fatal(err)
			}
			csvRows, err := csv.NewReader(&b).ReadAll()
			if err != nil || len(csvRows)-1 != len(sum.Steps) {
				t.Fatalf("CSV: %v, %d rows for %d steps", err, len(csvRows)-1, len(sum.Steps))
			}
			col := map[string]int{}
			for i, h := range csvRows[0] {
				col[h] = i
			}
			for i, st := range sum.Steps {
				want := recomputeStep(t, run.Snapshots, st.FirstSeq, st.LastSeq)
				lat := want.lat
				html := stepRows[i]
				check := func(where, got string, want, unit float64) {
					t.Helper()
					v, err := strconv.ParseFloat(got, 64)
					if err != nil || math.Abs(v-want) > unit/2+1e-9 {
						t.Errorf("step %d: %s %q, the run file's ticks give %.4f", i+1, where, got, want)
					}
				}
				check("HTML infer/s", html[2], want.inferPerS, 0.1)
				shown := lat
				if want.schedOK {
					// The report shows an open loop's latency from the
					// schedule.
					shown = want.sched
				}
				for j, p := range []time.Duration{shown.P50, shown.P90, shown.P95, shown.P99} {
					check("HTML latency", html[3+j], millis(p), 0.01)
				}
				// The queue follows the latency cells.
				check("HTML queue", html[7], millis(want.queue), 0.01)
				c := csvRows[i+1]
				check("CSV infer/s", c[1], want.inferPerS, 0.002*want.inferPerS)
				check("CSV p99", c[col["p99 latency"]], float64(lat.P99/time.Microsecond), 1)
				check("CSV queue", c[col["Server Queue"]], float64(want.queue/time.Microsecond), 2)
				// The summary's step is the same numbers.
				check("step infer/s", strconv.FormatFloat(st.Client.InferPerS, 'f', -1, 64), want.inferPerS, 1e-6*want.inferPerS)
				if st.Client.Latency.P99 != lat.P99 || st.Server.Queue-want.queue > time.Microsecond || want.queue-st.Server.Queue > time.Microsecond {
					t.Errorf("step %d: summary p99 %v queue %v; the run file's ticks %v, %v", i+1, st.Client.Latency.P99, st.Server.Queue, lat.P99, want.queue)
				}
			}
		})
	}
}
