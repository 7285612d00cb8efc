package record_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// A headless run records one line per tick and a summary at the end; the
// file reads back whole even if the run is killed before Close.
func Example() {
	dir, _ := os.MkdirTemp("", "run")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.jsonl")

	h := record.Header{
		TritontopVersion: "dev",
		Args:             []string{"-m", "simple", "-H", "Authorization: Bearer s3cret"},
		Model:            record.ModelInfo{Name: "simple"},
		Load:             stats.Load{Mode: load.Concurrency, Concurrency: 4},
		Interval:         time.Second,
	}
	w, err := record.Create(path, h)
	if err != nil {
		fmt.Println(err)
		return
	}
	sum := report.NewSummarizer(h)
	for seq := 1; seq <= 3; seq++ {
		s := stats.Snapshot{Seq: seq, Elapsed: time.Duration(seq) * time.Second, Interval: time.Second,
			Load: stats.Load{Mode: load.Concurrency, Concurrency: 4}}
		w.WriteSnapshot(s)
		sum.Add(s)
	}
	w.Close(sum.Summary())

	run, err := record.ReadAll(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(run.Header.Args, len(run.Snapshots), run.Summary.Ticks)
	// Output: [-m simple -H Authorization: REDACTED] 3 3
}
