package tui_test

import (
	tea "charm.land/bubbletea/v2"

	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/tui"
)

// The dashboard of a live run: the aggregator's snapshots in, the driver's
// Control for the load keys. Run blocks until q or ctrl-c; the caller then
// stops the driver and writes its summary.
func Example() {
	snapshots := make(chan stats.Snapshot, 16) // the aggregator's output
	m := tui.New(tui.Options{
		Snapshots: snapshots,
		Control:   nil, // a driver.Control in a live run; nil in replay
		Header: tui.HeaderInfo{
			Server: "127.0.0.1:8001", Protocol: "gRPC", Model: "resnet50", Version: "1",
			MaxBatch: 32, DynamicBatching: true,
		},
	})
	p := tea.NewProgram(m)
	_ = p // if _, err := p.Run(); err != nil { ... }
}
