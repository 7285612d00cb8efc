package record

import (
	"time"

	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/stats/statstest"
)

// testHeader is a header as the CLI would build it.
func testHeader() Header {
	return Header{
		TritontopVersion: "0.0.0-test",
		Args:             []string{"-m", "resnet50", "-H", "Authorization: Bearer abc123", "--concurrency-range", "1:2"},
		StartTime:        statstest.T0,
		Server: ServerInfo{
			URL:       "127.0.0.1:8001",
			Protocol:  "grpc",
			Metadata:  []byte(`{"name":"triton","version":"2.73.0","extensions":["classification","statistics"]}`),
			Simulated: true,
		},
		Model: ModelInfo{
			Name:     "resnet50",
			Version:  "1",
			Metadata: []byte(`{"name":"resnet50","versions":["1"],"platform":"onnxruntime_onnx"}`),
			Config:   []byte(`{"name":"resnet50","max_batch_size":32,"dynamic_batching":{}}`),
		},
		Load:     stats.Load{Mode: load.Concurrency, Concurrency: 1},
		Interval: time.Second,
		Window:   10 * time.Second,
	}
}

// tick and withRun are statstest's, named for brevity in this package's
// tests.
var (
	tick    = statstest.Tick
	withRun = statstest.WithRun
)

// testSummary is a summary line's worth of fields from snaps: enough to see
// that a summary reads back as written (report computes real ones).
func testSummary(snaps []stats.Snapshot) Summary {
	last := snaps[len(snaps)-1]
	return Summary{
		Model: "resnet50", Version: "1", URL: "127.0.0.1:8001", Protocol: "grpc",
		Start: statstest.T0, End: last.Time, Duration: last.Elapsed, Ticks: len(snaps),
		Load: last.Load, Client: last.Run,
		Steps: []Step{{Load: last.Load, FirstSeq: snaps[0].Seq, LastSeq: last.Seq, Ticks: len(snaps), Client: last.Run}},
	}
}
