package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"testing"
	"time"
)

// TestThroughputSpansFromRunFile: the summary's throughput is the whole
// run's and the CSV row's and each step's are their level's, and each
// equals inferences over the time load was applied recomputed from the
// run file's ticks for the same span (the ticks of the level, or all of
// them); the text names the span when the two differ.
func TestThroughputSpansFromRunFile(t *testing.T) {
	for _, name := range []string{"c16", "rate", "sweep", "llm"} {
		t.Run(name, func(t *testing.T) {
			run := frozenRun(t, name)
			sum := SummarizeRun(run)
			var all, allD float64
			for _, s := range run.Snapshots {
				all += float64(s.Tick.Inferences)
				d := s.Tick.Duration
				if d <= 0 {
					d = s.Interval - s.Paused
				}
				allD += d.Seconds()
			}
			if got, want := sum.Client.InferPerS, all/allD; !near(got, want) {
				t.Errorf("summary %v infer/s, the run file's ticks %v", got, want)
			}
			var b bytes.Buffer
			if err := WriteCSV(&b, run); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows)-1 != len(sum.Steps) {
				t.Fatalf("%d CSV rows for %d steps", len(rows)-1, len(sum.Steps))
			}
			for i, st := range sum.Steps {
				var inf float64
				var d time.Duration
				for _, s := range run.Snapshots {
					if s.Seq >= st.FirstSeq && s.Seq <= st.LastSeq && !s.Load.Drain {
						inf += float64(s.Tick.Inferences)
						d += s.Tick.Duration
					}
				}
				want := inf / d.Seconds()
				csvV, err := strconv.ParseFloat(rows[i+1][1], 64)
				if err != nil {
					t.Fatal(err)
				}
				if !near(st.Client.InferPerS, want) || math.Abs(csvV-want) > 5e-6*want+1e-3 {
					t.Errorf("step %d: step %v, CSV %v infer/s; the run file's ticks %v", i+1, st.Client.InferPerS, csvV, want)
				}
			}
			if len(sum.Steps) == 1 && sum.Steps[0].Ticks < sum.Ticks {
				var txt bytes.Buffer
				if err := WriteText(&txt, sum); err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(txt.Bytes(), []byte("whole run: ")) {
					t.Errorf("the text summary does not say its block is the whole run:\n%s", txt.String())
				}
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
