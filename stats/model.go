package stats

import (
	"strconv"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
)

// Model is one model of a run over several models (tritontop -m a -m b):
// its own load, the requests sent to it, and Triton's statistics of it.
// It reads like a Snapshot of that model alone, and ModelView makes it
// one. The Snapshot's own Tick, Window, Run and Server are then the
// aggregate over the models: their counts add up to it.
type Model struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Load is the model's own load during the tick, as Snapshot.Load.
	Load Load `json:"load"`
	// Tick, Window and Run are the client's view of this model's requests,
	// over the same spans as the Snapshot's.
	Tick   ClientStats `json:"tick"`
	Window ClientStats `json:"window"`
	Run    ClientStats `json:"run"`
	// Server is this model's ModelStatistics deltas over the tick, added
	// over the replicas in a run over several (AggregateServer).
	Server ServerStats `json:"server"`
	// ServerLate and ServerLateSeq are this model's statistics read late,
	// as the Snapshot's (over its servers).
	ServerLate    *ServerStats `json:"server_late,omitempty"`
	ServerLateSeq int          `json:"server_late_seq,omitempty"`
	// The tick's histograms of this model's requests, encoded as the
	// Snapshot's.
	Histogram          string `json:"histogram,omitempty"`
	ScheduledHistogram string `json:"scheduled_histogram,omitempty"`
	TTFTHistogram      string `json:"ttft_histogram,omitempty"`
	ITLHistogram       string `json:"itl_histogram,omitempty"`
	ResponsesHistogram string `json:"responses_histogram,omitempty"`
	SequenceHistogram  string `json:"sequence_histogram,omitempty"`
}

// ModelSource is one model of a run over several models, as a Collector
// reads it: its driver's results and load, and its statistics on each
// server.
type ModelSource struct {
	// Name and Version name the model in Snapshots.
	Name, Version string
	// Results are the model's driver's finished requests; Control its
	// load (nil: only the mode its results show). The drivers of one
	// collector share one Epoch.
	Results <-chan []driver.Result
	Control LoadState
	// Servers read the model's statistics: one poller per server, in the
	// order of CollectorOptions.Replicas (one with a single server). An
	// entry may be nil.
	Servers []*ServerPoller
	// Decoupled says that the model is decoupled (see
	// CollectorOptions.Decoupled).
	Decoupled bool
}

// ModelView is model i's share of the tick in a Snapshot's shape: its load,
// client statistics, server statistics and histograms, with the tick's
// shared parts (the servers' metrics and GPUs, the client machine, the
// replicas and the models) as they are. Any reader of Snapshots (a
// dashboard pane, a step builder, the diagnosis) so reads one model of a
// run over several. An i out of range gives s itself.
func (s *Snapshot) ModelView(i int) Snapshot {
	if i < 0 || i >= len(s.Models) {
		return *s
	}
	m := &s.Models[i]
	v := *s
	v.Load, v.Tick, v.Window, v.Run, v.Server = m.Load, m.Tick, m.Window, m.Run, m.Server
	v.ServerLate, v.ServerLateSeq = m.ServerLate, m.ServerLateSeq
	v.Histogram, v.ScheduledHistogram = m.Histogram, m.ScheduledHistogram
	v.TTFTHistogram, v.ITLHistogram, v.ResponsesHistogram = m.TTFTHistogram, m.ITLHistogram, m.ResponsesHistogram
	v.SequenceHistogram = m.SequenceHistogram
	return v
}

// ModelIndex is the index of the model named name in s.Models, -1 when
// there is none.
func (s *Snapshot) ModelIndex(name string) int {
	for i := range s.Models {
		if s.Models[i].Name == name {
			return i
		}
	}
	return -1
}

// AggregateLoad is the load of several models together: concurrency and
// rate add, and so do the requests in flight and the running sequences;
// the mode is the models' when they share one, else load.Mixed; the
// distribution is kept when every open-loop model has the same. It is
// paused when every model is, and in the drain when every model is (they
// are stopped together). A change in any model's load changes it, except
// changes that cancel out in a sum: compare the models' own loads to tell
// load levels apart (see SameLevels).
func AggregateLoad(loads []Load) Load {
	var out Load
	if len(loads) == 0 {
		return out
	}
	out.Paused, out.Drain = true, true
	for i, l := range loads {
		switch {
		case i == 0:
			out.Mode = l.Mode
		case l.Mode != out.Mode:
			out.Mode = load.Mixed
		}
		if l.Open() {
			out.Rate += l.Rate
			switch {
			case out.Distribution == "":
				out.Distribution = l.Distribution
			case l.Distribution != out.Distribution:
				out.Distribution = ""
			}
		} else {
			out.Concurrency += l.Concurrency
		}
		out.InFlight += l.InFlight
		out.Sequences += l.Sequences
		out.Step = max(out.Step, l.Step)
		out.Paused = out.Paused && l.Paused
		out.Drain = out.Drain && l.Drain
	}
	// A rate of several models is the sum of round numbers: no last bits.
	out.Rate, _ = strconv.ParseFloat(strconv.FormatFloat(out.Rate, 'g', 12, 64), 64)
	if out.Mode != load.Rate && out.Mode != load.Mixed {
		out.Distribution = ""
	}
	return out
}

// SameLevels reports whether two ticks ran at the same load level: the
// same level of the whole load and, in a run over several models, of
// every model.
func SameLevels(a, b *Snapshot) bool {
	if !a.Load.SameLevel(b.Load) || len(a.Models) != len(b.Models) {
		return false
	}
	for i := range a.Models {
		if a.Models[i].Name != b.Models[i].Name || !a.Models[i].Load.SameLevel(b.Models[i].Load) {
			return false
		}
	}
	return true
}

// ModelLoads names each model's load: "resnet50 concurrency 8, bert
// rate 200/s"; "" with one model.
func (s *Snapshot) ModelLoads() string {
	out := ""
	for i := range s.Models {
		if i > 0 {
			out += ", "
		}
		out += s.Models[i].Name + " " + s.Models[i].Load.String()
	}
	return out
}
