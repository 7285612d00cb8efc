package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report/svgplot"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/kserve"
)

// HTMLRun is one run of an HTML report: a run file read in, and the name it
// goes by on every chart and table.
type HTMLRun struct {
	// Label names the run; it must be unique in a report.
	Label string
	// File is where the run was read from, shown in its header.
	File string
	Run  *record.Run
}

// HTMLOptions are a report's page-wide settings.
type HTMLOptions struct {
	// Title heads the page; empty gives "tritontop report: MODEL".
	Title string
	// Generator names what wrote the report, "tritontop 0.1.0".
	Generator string
}

//go:embed html.tmpl
var htmlTemplateText string

// htmlTemplate is the page; it is parsed once and only executed after.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"inc": func(i int) int { return i + 1 },
}).Parse(htmlTemplateText))

// WriteHTML writes one self-contained HTML page about the runs: for each
// run a header (server, model and its config, tritontop version, the
// command line with secrets redacted) and what limited the load; the
// latency–throughput curve of a sweep with the SLO and the knee; the
// per-step tables; the capacity plan when a run has one; and the time
// series over the runs with the load changes marked: throughput, latency
// percentiles from the send and from the schedule, Triton's queue and
// compute times stacked, batch size, GPU utilization, memory and power per
// GPU, server and client CPU, and errors. A decoupled model's run (an LLM)
// adds its responses to the header, responses per second and time to the
// first response and between responses to the step table, and the
// percentiles of those two times as charts, with their SLOs. A stateful
// model's run adds its sequences to the header, sequences per second and
// their latency to the step table, and the sequences active and their
// latency (p50 and p99) as charts. Several runs overlay on the same
// charts, each in its own colour under its label; so do the models of a
// run over several models, each shown as a run of its own under its name,
// with the GPUs and CPU they share drawn once. A run over several replicas
// adds a Replicas section: a table with each replica's requests,
// throughput, latency, errors, Triton's queue and compute, GPU and time in
// service, and charts of the throughput and queue time of each replica
// (in the run's colour, a shade and dash per replica) and of the replicas
// in service, with each replica's time out of service shaded.
//
// The page is inline CSS and SVG, with no script and nothing fetched, so it
// opens from a mail attachment on a machine without a network. Charts are
// downsampled for drawing (a one-hour run at one tick per second stays well
// under 2 MB); the tables keep every step's numbers.
func WriteHTML(w io.Writer, runs []HTMLRun, o HTMLOptions) error {
	if len(runs) == 0 {
		return errors.New("report: no runs for the HTML report")
	}
	seen := map[string]bool{}
	for i, r := range runs {
		if r.Run == nil {
			return fmt.Errorf("report: run %d (%s) has not been read", i+1, textsafe.Quote(r.Label))
		}
		if r.Label == "" {
			return fmt.Errorf("report: run %d (%s) has no label", i+1, r.File)
		}
		if seen[r.Label] {
			return fmt.Errorf("report: two runs are labelled %s: give each its own --label", textsafe.Quote(r.Label))
		}
		seen[r.Label] = true
	}
	page, err := buildPage(runs, o)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("report: render HTML: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("report: write HTML: %w", err)
	}
	return nil
}

// htmlPage is what the template renders.
type htmlPage struct {
	Title     string
	Generator string
	// Files is the number of run files; Runs has one view per file, or
	// per model of a file over several models.
	Files int
	Runs  []*htmlRunView
	Multi bool
	// Curve is the latency–throughput chart, nil without a sweep.
	Curve  *htmlChart
	Charts []htmlChart
	// Replicas has a table per run over several replicas, and
	// ReplicaCharts their charts; both empty without one.
	Replicas      []*htmlReplicaView
	ReplicaCharts []htmlChart
}

// htmlChart is one chart, rendered.
type htmlChart struct {
	ID    string
	Title string
	SVG   template.HTML
	// Note says what a chart leaves out.
	Note string
}

// htmlRunView is one run's header, tables and findings.
type htmlRunView struct {
	Index  int
	Label  string
	Color  string
	Style  template.CSS
	File   string
	Meta   []htmlField
	Notes  []string
	Steps  []htmlStepRow
	Search []string
	// StepsNote explains the latency columns; Streaming adds a decoupled
	// model's columns to the step table, Sequences a stateful model's.
	StepsNote string
	Streaming bool
	Sequences bool
	Diagnosis []stats.Finding
	Errors    []stats.ErrorCount
	Plan      *htmlPlan
	Tune      *htmlTune
	// Composing is a pipeline's table of its composing models per load
	// step (composingRows).
	Composing [][]string
}

// htmlField is one line of a run's header.
type htmlField struct {
	Name, Value string
	Code        bool
}

// htmlStepRow is one row of the step table.
type htmlStepRow struct {
	Cells []htmlCell
	Class string
	Badge string
}

// htmlCell is a table cell with an optional hover title and class.
type htmlCell struct {
	Text, Title, Class string
}

// htmlPlan is a capacity plan as the page shows it.
type htmlPlan struct {
	Fields      []htmlField
	Assumptions []string
	HPA         string
}

func buildPage(files []HTMLRun, o HTMLOptions) (*htmlPage, error) {
	parts := splitModels(files)
	runs := make([]HTMLRun, len(parts))
	for i, pt := range parts {
		runs[i] = pt.HTMLRun
	}
	p := &htmlPage{Title: o.Title, Generator: o.Generator, Files: len(files), Multi: len(runs) > 1}
	if p.Title == "" {
		models := []string{}
		for _, r := range runs {
			if m := r.Run.Header.Model.Name; m != "" && !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
		p.Title = "tritontop report"
		if len(models) > 0 {
			p.Title += ": " + strings.Join(models, ", ")
		}
	}
	var sums []record.Summary
	for i, r := range runs {
		sum := SummarizeRun(r.Run)
		if parts[i].models > 0 {
			// tritontop's CPU is the whole run's: per request of one
			// model it would mean nothing.
			sum.ClientCPU = record.ClientCPU{}
			for j := range sum.Steps {
				sum.Steps[j].ClientCPU = record.ClientCPU{}
			}
		}
		sums = append(sums, sum)
		v := runView(i, r, sum)
		if n := parts[i].models; n > 0 {
			v.Notes = append(v.Notes, fmt.Sprintf("One of the %d models of this run, which share its servers' GPUs; tritontop's CPU is the whole run's.", n))
		}
		p.Runs = append(p.Runs, v)
	}
	charts := newChartSet(runs, sums)
	charts.source = make([]int, len(parts))
	for i, pt := range parts {
		charts.source[i] = pt.source
		if i == 0 || pt.source != parts[i-1].source {
			charts.sourceLabel = append(charts.sourceLabel, files[pt.source].Label)
		}
	}
	var err error
	if p.Curve, err = charts.curve(); err != nil {
		return nil, err
	}
	if p.Charts, err = charts.timeCharts(); err != nil {
		return nil, err
	}
	if p.Replicas, p.ReplicaCharts, err = charts.replicas(len(files)); err != nil {
		return nil, err
	}
	return p, nil
}

// runView is a run's header, step table, findings and plan.
func runView(i int, r HTMLRun, sum record.Summary) *htmlRunView {
	h := r.Run.Header
	v := &htmlRunView{
		Index: i, Label: r.Label, Color: svgplot.ColorOf(i), File: r.File,
		Diagnosis: namedFindings(sum.Diagnosis, sum.DiagnosisSpans), Errors: sum.Client.ErrorsByCode,
	}
	// The colour is svgplot's palette entry, a constant "#rrggbb".
	v.Style = template.CSS("--c:" + v.Color)
	add := func(name, value string) {
		if value != "" {
			v.Meta = append(v.Meta, htmlField{Name: name, Value: value})
		}
	}
	model := h.Model.Name
	if h.Model.Version != "" {
		model += " v" + h.Model.Version
	}
	add("model", model)
	add("config", configSummary(h.Model.Config))
	add("inputs", tensorsSummary(h.Model.Config, true))
	add("outputs", tensorsSummary(h.Model.Config, false))
	add("server", serverSummary(h.Server))
	add("GPUs", gpusSummary(sum.Metrics.GPUs))
	add("load", loadSummary(sum))
	if !sum.Start.IsZero() {
		add("started", sum.Start.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	add("length", fmt.Sprintf("%s, %d ticks of %s", sum.Duration.Round(time.Millisecond), sum.Ticks, h.Interval))
	add("requests", fmt.Sprintf("%d, %s, %s infer/s over the run", sum.Client.Requests, errorsText(sum.Client.Errors, sum.Client.Requests), fixed(sum.Client.InferPerS, 1)))
	add("responses", responsesSummary(sum))
	add("sequences", sequencesSummary(sum))
	add("tritontop", h.TritontopVersion)
	if len(h.Args) > 0 {
		v.Meta = append(v.Meta, htmlField{Name: "command", Value: commandLine(h.Args), Code: true})
	}
	for _, n := range runNotes(sum) {
		v.Notes = append(v.Notes, n)
	}
	if r.Run.Truncated {
		v.Notes = append(v.Notes, "The file's last line was incomplete (the run was killed): the report shows the complete ticks.")
	}
	if r.Run.Summary == nil {
		v.Notes = append(v.Notes, "The run ended without its summary line; the summary here is computed from the ticks.")
	}
	if len(sum.Metrics.GPUs) == 0 {
		v.Notes = append(v.Notes, "The server's metrics reported no GPU.")
	}
	if h.Server.InProcess {
		v.Notes = append(v.Notes, "The simulator ran inside tritontop's process: tritontop's CPU includes the server's.")
	}
	cols := stepColumnsOf(sum.Steps)
	v.Streaming, v.Sequences = cols.streaming, cols.sequences
	v.Steps = stepRows(sum, cols)
	v.Composing = composingRows(sum.Steps)
	v.Search = searchLines(sum)
	v.StepsNote = "Latency in ms from the send"
	if sum.Load.Open() {
		v.StepsNote = "Latency in ms from the scheduled send (open loop)"
	}
	if v.Streaming {
		v.StepsNote += ", to the final response; resp/s is responses per second, TTFT the time to the first response (from the same start as the latency), ITL the time between responses"
	}
	if v.Sequences {
		v.StepsNote += "; seq/s is sequences ended per second, seq p50 and p99 their latency from a sequence's first send to its last response"
	}
	v.StepsNote += "; queue and compute are Triton's own, per request; GPU is the busiest GPU's average; CPU/req is tritontop's CPU time per request."
	if sum.Plan != nil {
		v.Plan = planView(sum.Plan)
	}
	if sum.Tune != nil {
		// A chart that cannot be drawn leaves the section without it.
		v.Tune, _ = tuneView(sum.Tune, i)
	}
	return v
}

// commandLine is the recorded arguments as one shell line, secrets
// redacted again in case the file was written by hand.
func commandLine(args []string) string {
	out := []string{"tritontop"}
	for _, a := range record.RedactArgs(args) {
		if a == "" || strings.ContainsAny(a, " \t\"'$\\|&;<>()*?[]#~`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// configSummary is the model config in one line: platform, max batch size,
// dynamic batching, instance groups.
func configSummary(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	cfg, err := kserve.ParseConfigJSON(raw)
	if err != nil {
		return "unreadable config: " + err.Error()
	}
	var parts []string
	if p := cfg.GetPlatform(); p != "" {
		parts = append(parts, p)
	} else if b := cfg.GetBackend(); b != "" {
		parts = append(parts, b+" backend")
	}
	if mb := cfg.GetMaxBatchSize(); mb > 0 {
		parts = append(parts, fmt.Sprintf("max batch %d", mb))
	} else {
		parts = append(parts, "no batching")
	}
	if db := cfg.GetDynamicBatching(); db != nil {
		s := "dynamic batching"
		var opts []string
		if pb := db.GetPreferredBatchSize(); len(pb) > 0 {
			sizes := make([]string, len(pb))
			for i, v := range pb {
				sizes[i] = strconv.Itoa(int(v))
			}
			opts = append(opts, "preferred "+strings.Join(sizes, ", "))
		}
		if d := db.GetMaxQueueDelayMicroseconds(); d > 0 {
			opts = append(opts, fmt.Sprintf("max queue delay %d µs", d))
		}
		if len(opts) > 0 {
			s += " (" + strings.Join(opts, "; ") + ")"
		}
		parts = append(parts, s)
	}
	if cfg.GetSequenceBatching() != nil {
		parts = append(parts, "sequence batching")
	}
	for _, g := range cfg.GetInstanceGroup() {
		kind := strings.TrimPrefix(g.GetKind().String(), "KIND_")
		s := fmt.Sprintf("%d × %s instance", max(g.GetCount(), 1), kind)
		if gpus := g.GetGpus(); len(gpus) > 0 {
			ids := make([]string, len(gpus))
			for i, v := range gpus {
				ids[i] = strconv.Itoa(int(v))
			}
			s += " on GPU " + strings.Join(ids, ", ")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// tensorsSummary lists a model's inputs or outputs: "INPUT0 FP32 [3,224,224]".
func tensorsSummary(raw json.RawMessage, inputs bool) string {
	if len(raw) == 0 {
		return ""
	}
	cfg, err := kserve.ParseConfigJSON(raw)
	if err != nil {
		return ""
	}
	type tensor interface {
		GetName() string
		GetDims() []int64
	}
	var list []string
	describe := func(t tensor, dtype string) {
		dims := make([]string, len(t.GetDims()))
		for i, d := range t.GetDims() {
			dims[i] = strconv.FormatInt(d, 10)
		}
		list = append(list, fmt.Sprintf("%s %s [%s]", t.GetName(), strings.TrimPrefix(dtype, "TYPE_"), strings.Join(dims, ",")))
	}
	if inputs {
		for _, in := range cfg.GetInput() {
			describe(in, in.GetDataType().String())
		}
	} else {
		for _, out := range cfg.GetOutput() {
			describe(out, out.GetDataType().String())
		}
	}
	return strings.Join(list, ", ")
}

// serverSummary names the server: address, protocol, what it says it is.
func serverSummary(s record.ServerInfo) string {
	out := s.URL
	if s.Protocol != "" {
		out += " (" + s.Protocol + ")"
	}
	var meta struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if len(s.Metadata) > 0 && json.Unmarshal(s.Metadata, &meta) == nil && meta.Name != "" {
		out += ", " + meta.Name
		if meta.Version != "" {
			out += " " + meta.Version
		}
	}
	switch {
	case s.Simulated && s.InProcess:
		out += ", tritontop's simulator in the same process"
	case s.Simulated:
		out += ", tritontop's simulator"
	}
	return out
}

// gpusSummary lists the server's GPUs as the charts number them.
func gpusSummary(gpus []record.GPUSummary) string {
	var list []string
	for i, g := range gpus {
		s := fmt.Sprintf("%d: %s", i, g.UUID)
		if g.Replica != "" {
			s += " on " + g.Replica
		}
		if g.Name != "" {
			s += " " + g.Name
		}
		if g.HasMemory && g.MemoryTotal > 0 {
			s += fmt.Sprintf(" (%s GB)", fixed(g.MemoryTotal/1e9, 1))
		}
		list = append(list, s)
	}
	return strings.Join(list, ", ")
}

// loadSummary is the run's load in words: one level, or its steps.
func loadSummary(sum record.Summary) string {
	switch len(sum.Steps) {
	case 0:
		return sum.Load.String()
	case 1:
		return sum.Steps[0].Load.String()
	}
	s := fmt.Sprintf("%d steps, %s to %s", len(sum.Steps), sum.Steps[0].Load.String(), sum.Steps[len(sum.Steps)-1].Load.String())
	if sr := sum.Search; sr != nil && sr.Mode != "" {
		s += " (" + sr.Mode + ")"
	}
	if sr := sum.Search; sr != nil && sr.SLO != nil {
		s += ", SLO " + sloName(sr.SLO)
	}
	return s
}

// responsesSummary is a decoupled model's responses over the run in words,
// "" for other models.
func responsesSummary(sum record.Summary) string {
	sc := sum.Client.Streaming
	if sc == nil {
		return ""
	}
	s := fmt.Sprintf("%d, %s per request, %s per second", sc.Responses, fixed(sc.PerRequest.Mean, 1), fixed(sc.ResponsesPerS, 1))
	if r := sum.Server.Responses; r != nil {
		s += fmt.Sprintf("; Triton counted %d (empty %d, failed %d, cancelled %d), %s ms of compute per response", r.Success, r.Empty, r.Fail, r.Cancel, fixed(millis(r.ComputeInfer), 2))
	}
	return s
}

// sequencesSummary is a stateful model's sequences over the run in words,
// "" for other models.
func sequencesSummary(sum record.Summary) string {
	sq := sum.Client.Sequences
	if sq == nil {
		return ""
	}
	s := fmt.Sprintf("%d ended, %s per second", sq.Ended, fixed(sq.EndedPerS, 1))
	if l := sq.Latency; l.Count > 0 {
		s += fmt.Sprintf("; sequence latency avg %s, p50 %s, p90 %s, p95 %s, p99 %s ms", fixed(millis(l.Mean), 2),
			fixed(millis(l.P50), 2), fixed(millis(l.P90), 2), fixed(millis(l.P95), 2), fixed(millis(l.P99), 2))
	}
	return s
}

// sequenceStepCells are a stateful model's cells of a step: sequences
// ended per second, and their latency's p50 and p99, each titled with
// more. A step that ended none has none per second and no latency.
func sequenceStepCells(st record.Step) []htmlCell {
	sq := st.Client.Sequences
	if sq == nil {
		return []htmlCell{{Text: fixed(0, 1), Title: "no sequence ended in " + st.Client.Duration.Round(time.Millisecond).String()}, dash(), dash()}
	}
	cells := []htmlCell{{Text: fixed(sq.EndedPerS, 1),
		Title: fmt.Sprintf("%d sequences ended in %s", sq.Ended, st.Client.Duration.Round(time.Millisecond))}}
	l := sq.Latency
	if l.Count == 0 {
		return append(cells, dash(), dash())
	}
	title := fmt.Sprintf("sequence latency: avg %s, p50 %s, p90 %s, p95 %s, p99 %s ms over %d sequences",
		fixed(millis(l.Mean), 2), fixed(millis(l.P50), 2), fixed(millis(l.P90), 2), fixed(millis(l.P95), 2), fixed(millis(l.P99), 2), l.Count)
	return append(cells, htmlCell{Text: fixed(millis(l.P50), 2), Title: title}, htmlCell{Text: fixed(millis(l.P99), 2), Title: title})
}

// streamingStepCells are a decoupled model's cells of a step: responses
// per second, TTFT p50 and p99, ITL p50 and p99, each titled with more.
func streamingStepCells(st record.Step) []htmlCell {
	sc := st.Client.Streaming
	if sc == nil {
		return []htmlCell{dash(), dash(), dash(), dash(), dash()}
	}
	cells := []htmlCell{{Text: fixed(sc.ResponsesPerS, 1),
		Title: fmt.Sprintf("%d responses in %s, %s per request", sc.Responses, st.Client.Duration.Round(time.Millisecond), fixed(sc.PerRequest.Mean, 1))}}
	timing := func(l stats.Latency, what, of string) []htmlCell {
		if l.Count == 0 {
			return []htmlCell{dash(), dash()}
		}
		title := fmt.Sprintf("%s: avg %s, p50 %s, p90 %s, p95 %s, p99 %s ms over %d %s", what,
			fixed(millis(l.Mean), 2), fixed(millis(l.P50), 2), fixed(millis(l.P90), 2), fixed(millis(l.P95), 2), fixed(millis(l.P99), 2), l.Count, of)
		return []htmlCell{{Text: fixed(millis(l.P50), 2), Title: title}, {Text: fixed(millis(l.P99), 2), Title: title}}
	}
	ttft, scheduled := stepTTFT(sc)
	what := "time to first response from the send"
	if scheduled {
		what = "time to first response from the schedule"
	}
	cells = append(cells, timing(ttft, what, "requests")...)
	return append(cells, timing(sc.ITL, "time between responses", "gaps")...)
}

// stepRows is the step table: every step's numbers at full precision, the
// knee and the best level under the SLO marked; a decoupled model's
// columns, then a stateful model's, after the latency.
func stepRows(sum record.Summary, cols stepColumns) []htmlStepRow {
	knee, best := -1, -1
	if sr := sum.Search; sr != nil {
		knee, best = sr.Knee, sr.Best
		if sr.SLO == nil {
			best = -1
		}
	} else {
		knee = Knee(sum.Steps)
	}
	var rows []htmlStepRow
	for i, st := range sum.Steps {
		c := st.Client
		l := c.Latency
		if c.Scheduled != nil && c.Scheduled.Count > 0 {
			l = *c.Scheduled
		}
		msc := func(d time.Duration) htmlCell { return htmlCell{Text: fixed(millis(d), 2)} }
		cells := []htmlCell{
			{Text: strconv.Itoa(i + 1)},
			{Text: loadCell(st.Load), Class: "l"},
			{Text: fixed(c.InferPerS, 1), Title: fmt.Sprintf("%d inferences in %s", c.Inferences, c.Duration.Round(time.Millisecond))},
		}
		if l.Count > 0 {
			cells = append(cells, msc(l.P50), msc(l.P90), msc(l.P95), msc(l.P99))
		} else {
			cells = append(cells, dash(), dash(), dash(), dash())
		}
		if cols.streaming {
			cells = append(cells, streamingStepCells(st)...)
		}
		if cols.sequences {
			cells = append(cells, sequenceStepCells(st)...)
		}
		if sv := st.Server; sv.Available {
			cells = append(cells, msc(sv.Queue), htmlCell{
				Text:  fixed(millis(sv.Compute()), 2),
				Title: fmt.Sprintf("input %s + infer %s + output %s ms", fixed(millis(sv.ComputeInput), 3), fixed(millis(sv.ComputeInfer), 3), fixed(millis(sv.ComputeOutput), 3)),
			}, htmlCell{Text: fixed(sv.AvgBatch, 2)})
		} else {
			cells = append(cells, dash(), dash(), dash())
		}
		if u, ok := busiestGPU(st.Metrics); ok {
			cells = append(cells, htmlCell{Text: fixed(100*u, 1) + "%"})
		} else {
			cells = append(cells, dash())
		}
		if st.ClientCPU.PerRequest > 0 {
			cells = append(cells, htmlCell{Text: strconv.FormatInt(usec(st.ClientCPU.PerRequest), 10) + " µs"})
		} else {
			cells = append(cells, dash())
		}
		cells = append(cells, stableCell(st), sloCell(st), goodputCell(st), limitCell(st))
		row := htmlStepRow{Cells: cells}
		switch {
		case i == best && i == knee:
			row.Class, row.Badge = "best knee", "best under SLO · knee"
		case i == best:
			row.Class, row.Badge = "best", "best under SLO"
		case i == knee:
			row.Class, row.Badge = "knee", "knee"
		}
		rows = append(rows, row)
	}
	return rows
}

func dash() htmlCell { return htmlCell{Text: "-"} }

func stableCell(st record.Step) htmlCell {
	m := st.Measurement
	if m == nil {
		return dash()
	}
	what := fmt.Sprintf("%d windows of %d ticks measured, %d trials", m.Windows, m.WindowTicks, m.Trials)
	if m.Fixed {
		what = fmt.Sprintf("fixed length, %d windows of %d ticks", m.Windows, m.WindowTicks)
	}
	if m.Interrupted {
		what += "; interrupted by the end of the run"
	}
	if m.Stable {
		return htmlCell{Text: "yes", Title: what, Class: "pass"}
	}
	return htmlCell{Text: "no", Title: what + fmt.Sprintf("; the last windows differed by more than %s%%", g6(m.StabilityPercent)), Class: "fail"}
}

func sloCell(st record.Step) htmlCell {
	m := st.Measurement
	if m == nil || m.SLO == nil {
		return dash()
	}
	title := fmt.Sprintf("%s ms against %s", fixed(millis(m.SLO.Latency), 2), sloName(m.SLO))
	if m.SLO.GPUTarget > 0 {
		title += fmt.Sprintf("; busiest GPU %s%%", fixed(100*m.SLO.GPUUtilization, 1))
	}
	if m.SLO.Pass {
		return htmlCell{Text: "pass", Title: title, Class: "pass"}
	}
	return htmlCell{Text: "fail", Title: title, Class: "fail"}
}

func goodputCell(st record.Step) htmlCell {
	m := st.Measurement
	if m == nil || m.SLO == nil {
		return dash()
	}
	return htmlCell{Text: fixed(m.SLO.Goodput, 1), Title: "requests per second that met the SLO"}
}

func limitCell(st record.Step) htmlCell {
	if len(st.Diagnosis) == 0 {
		return dash()
	}
	var verdicts, messages []string
	for _, f := range st.Diagnosis {
		verdicts = append(verdicts, string(f.Verdict))
		messages = append(messages, f.Message)
	}
	return htmlCell{Text: strings.Join(verdicts, ", "), Title: strings.Join(messages, "\n") + "\n(" + StepDiagnosisSpan + ")", Class: "l warn"}
}

// planView is a capacity plan's numbers in words.
func planView(pl *record.Plan) *htmlPlan {
	v := &htmlPlan{Assumptions: pl.Assumptions, HPA: pl.HPA}
	add := func(name, value string) { v.Fields = append(v.Fields, htmlField{Name: name, Value: value}) }
	add("target load", fixed(pl.TargetRate, 1)+" req/s")
	if pl.Simulated {
		add("server", "SIMULATED: tritontop's simulator "+pl.DemoGPU)
	}
	if pl.Refused != "" {
		add("no replicas planned", pl.Refused)
		return v
	}
	capacity := fixed(pl.Capacity, 1) + " req/s per replica"
	if pl.CapacityLevel.Mode != "" {
		capacity += " at " + pl.CapacityLevel.String()
	}
	add("capacity", capacity)
	if pl.Limit != "" {
		add("limited by", pl.Limit)
	}
	replicas := strconv.Itoa(pl.Replicas)
	if pl.Spare {
		replicas += " (the fewest with 20% headroom over the target)"
	}
	if pl.ClientBound {
		replicas += " (CLIENT-BOUND: from a lower bound on the capacity)"
	}
	add("replicas", replicas)
	add("headroom", fixed(100*pl.Headroom, 1)+"%")
	add("GPUs", fmt.Sprintf("%d in all, %d per replica", pl.GPUs, pl.GPUsPerReplica))
	if pl.Autoscaling != "" {
		add("autoscaling", fmt.Sprintf("%s, target %s, %d to %d replicas", pl.Autoscaling, g6(pl.AutoscalingTarget), pl.MinReplicas, pl.MaxReplicas))
	}
	return v
}
