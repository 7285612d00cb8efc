package report

import (
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// modelAcc follows one model of a run over several models: the whole run
// and its own load levels, each through a StepBuilder, so that a model's
// numbers are summed, merged and averaged the way a step's are.
type modelAcc struct {
	name, version string
	whole         *StepBuilder
	levels        []record.Step
	cur           *StepBuilder
	last          stats.Load // the last tick's load outside the drain
	// recent are the model's last ticks outside the drain, without their
	// histograms, for its steps' diagnosis.
	recent []stats.Snapshot
}

// diagnose is what limits the model at the end of its ticks so far, read
// from its own load, latency and statistics (the client's CPU is the
// process's and is left out).
func (a *modelAcc) diagnose(o stats.DiagnoseOptions) []stats.Finding {
	return stats.Diagnose(a.recent, o)
}

// remember keeps the model's tick for the diagnosis.
func (a *modelAcc) remember(v stats.Snapshot) { a.recent = keepForDiagnosis(a.recent, v) }

// addModels adds each model's share of a tick.
func (z *Summarizer) addModels(s *stats.Snapshot) {
	for i := range s.Models {
		m := &s.Models[i]
		if i == len(z.models) {
			z.models = append(z.models, &modelAcc{name: m.Name, version: m.Version, whole: NewStepBuilder(stats.Load{})})
		}
		a := z.models[i]
		v := modelSnapshot(s, i)
		a.whole.Add(v)
		if a.cur != nil && !a.cur.load.SameLevel(m.Load) {
			st := a.cur.Step()
			st.Diagnosis = a.diagnose(z.diagOpts())
			a.levels = append(a.levels, st)
			a.cur = nil
		}
		if m.Load.Drain {
			continue
		}
		a.remember(v)
		a.last = m.Load
		if a.cur == nil {
			a.cur = NewStepBuilder(m.Load)
		}
		a.cur.Add(v)
	}
}

// modelSnapshot is model i's share of a tick, as a step builder reads it:
// its load, requests and statistics, the servers' metrics (the models share
// the GPUs), and no client CPU, which is the whole process's and cannot be
// split by model.
func modelSnapshot(s *stats.Snapshot, i int) stats.Snapshot {
	v := s.ModelView(i)
	v.System = stats.SystemStats{}
	v.Replicas, v.Models = nil, nil
	return v
}

// modelSummaries are the models over the ticks added so far.
func (z *Summarizer) modelSummaries() []record.ModelSummary {
	if len(z.models) == 0 {
		return nil
	}
	out := make([]record.ModelSummary, len(z.models))
	for i, a := range z.models {
		w := a.whole.Step()
		m := record.ModelSummary{Name: a.name, Version: a.version, Load: a.last,
			Client: w.Client, Approximate: w.Approximate, Server: w.Server}
		m.Steps = append([]record.Step(nil), a.levels...)
		if a.cur != nil {
			st := a.cur.Step()
			st.Diagnosis = a.diagnose(z.diagOpts())
			m.Steps = append(m.Steps, st)
		}
		for j := range m.Steps {
			// A model's steps carry no client CPU: it is the process's.
			m.Steps[j].ClientCPU = record.ClientCPU{}
		}
		out[i] = m
	}
	return out
}

// ModelRun is model i of a summary over several models as a summary of its
// own: its name, load, client and server numbers and steps, with the run's
// server, protocol and times. CSV files, comparisons and charts of one
// model read it as they read a run of one model. An i out of range gives
// the summary itself.
func ModelRun(s record.Summary, i int) record.Summary {
	if i < 0 || i >= len(s.Models) {
		return s
	}
	m := s.Models[i]
	return record.Summary{
		Model: m.Name, Version: m.Version, URL: s.URL, Protocol: s.Protocol,
		Start: s.Start, End: s.End, Duration: s.Duration, Ticks: s.Ticks,
		Load: m.Load, Client: m.Client, Server: m.Server, Metrics: s.Metrics, Steps: m.Steps,
	}
}

// writeModels is one row per model over the whole run: its load, its share
// of the requests, throughput, latency, Triton's queue and compute, batch
// size and errors; then each model that ran at several levels gets its
// step table.
func writeModels(b *strings.Builder, s record.Summary) {
	if len(s.Models) == 0 {
		return
	}
	b.WriteString(modelsTitle + ":\n")
	writeTable(b, "  ", modelRows(s))
	for i, m := range s.Models {
		if len(m.Steps) < 2 {
			continue
		}
		writeStepTable(b, m.Name+" steps", ModelRun(s, i))
	}
}

// mdModels is writeModels in Markdown.
func mdModels(b *strings.Builder, s record.Summary) {
	if len(s.Models) == 0 {
		return
	}
	rows := modelRows(s)
	b.WriteString("\n**" + mdText(modelsTitle) + "**\n\n")
	b.WriteString("| " + strings.Join(rows[0], " | ") + " |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range rows[1:] {
		for j := range row {
			row[j] = mdCell(row[j])
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	for i, m := range s.Models {
		if len(m.Steps) < 2 {
			continue
		}
		b.WriteString("\n**" + mdText(m.Name) + " steps**\n\n")
		mdSteps(b, ModelRun(s, i))
	}
}

const modelsTitle = "Models; latency in ms, from the schedule in open loop; queue and compute are Triton's, per request"

// modelRows are the model table's head and rows.
func modelRows(s record.Summary) [][]string {
	rows := [][]string{{"model", "load", "requests", "share", "infer/s", "errors", "p50", "p99", "queue", "compute", "batch"}}
	for _, m := range s.Models {
		name := m.Name
		if m.Version != "" {
			name += " v" + m.Version
		}
		share := "-"
		if s.Client.Requests > 0 {
			share = fixed(100*float64(m.Client.Requests)/float64(s.Client.Requests), 1) + "%"
		}
		c := m.Client
		row := []string{name, m.Load.String(), strconv.FormatInt(c.Requests, 10), share, fixed(c.InferPerS, 1), strconv.FormatInt(c.Errors, 10)}
		l := c.Latency
		if c.Scheduled != nil && c.Scheduled.Count > 0 {
			l = *c.Scheduled
		}
		if l.Count > 0 {
			row = append(row, msCell(l.P50), msCell(l.P99))
		} else {
			row = append(row, "-", "-")
		}
		if m.Server.Available {
			row = append(row, msCell(m.Server.Queue), msCell(m.Server.Compute()), fixed(m.Server.AvgBatch, 1))
		} else {
			row = append(row, "-", "-", "-")
		}
		rows = append(rows, row)
	}
	return rows
}

// modelPart is one run of an HTML report's charts and tables: a run file,
// or one model of a run file over several models.
type modelPart struct {
	HTMLRun
	// source indexes the run file it comes from; models is how many
	// models that file ran (0 for a run of one model).
	source, models int
}

// splitModels turns every run over several models into one run per model,
// as if each had been recorded alone (its header names the model, with its
// config and initial load; its ticks are its share, Snapshot.ModelView),
// so that every chart and table of the report shows each model under its
// own label: the model's name, after the file's label when the report has
// several files. Runs of one model stay as they are.
func splitModels(runs []HTMLRun) []modelPart {
	var out []modelPart
	for i, r := range runs {
		h := r.Run.Header
		if len(h.Models) == 0 {
			out = append(out, modelPart{HTMLRun: r, source: i})
			continue
		}
		for m, info := range h.Models {
			mh := h
			mh.Model, mh.Models = info, nil
			mh.Model.Load = nil
			if info.Load != nil {
				mh.Load = *info.Load
			}
			mr := &record.Run{Header: mh, Truncated: r.Run.Truncated}
			mr.Snapshots = make([]stats.Snapshot, len(r.Run.Snapshots))
			for j := range r.Run.Snapshots {
				s := &r.Run.Snapshots[j]
				k := m
				if k >= len(s.Models) || s.Models[k].Name != info.Name {
					k = s.ModelIndex(info.Name)
				}
				mr.Snapshots[j] = s.ModelView(k)
				mr.Snapshots[j].Models = nil
			}
			label := info.Name
			if len(runs) > 1 {
				label = r.Label + " · " + info.Name
			}
			// The summary line is the whole run's; the model's is made
			// from its ticks.
			out = append(out, modelPart{HTMLRun: HTMLRun{Label: label, File: r.File, Run: mr}, source: i, models: len(h.Models)})
		}
	}
	return out
}
