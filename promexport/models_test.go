package promexport

import (
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// The latencies of the crafted run over two models, each far (over 1%)
// from every default bucket bound, so that HDR's resolution never moves one
// across a bound: resnet50's from the send (closed loop, so from the
// schedule too), bert's from the send and from its schedule (60 ms
// earlier).
var (
	resnetLatencies = []time.Duration{800 * time.Microsecond, 1500 * time.Microsecond, 3 * time.Millisecond,
		12 * time.Millisecond, 45 * time.Millisecond}
	bertLatencies = []time.Duration{70 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond,
		1200 * time.Millisecond}
)

const bertScheduleLag = 60 * time.Millisecond

// twoModelsRun is five one-second ticks of a run over two models, made as
// the collector makes them: each model's entry from its own aggregator,
// the top from one over every result. resnet50 at concurrency 4 answers
// 100+10·seq requests a tick and fails 3 (UNAVAILABLE), with one cancelled
// and a retry in ten; bert at 200/s, then 300/s from tick 4, answers 40+seq
// and fails 2 (INTERNAL), a send in four late and a retry in five. lat and
// sched are each model's latencies from the send and from the schedule,
// for the expected buckets.
func twoModelsRun(t *testing.T) (snaps []stats.Snapshot, lat, sched map[string][]time.Duration) {
	t.Helper()
	names := []string{"resnet50", "bert"}
	all := stats.NewAggregator(time.Second, 10*time.Second)
	aggs := []*stats.Aggregator{stats.NewAggregator(time.Second, 10*time.Second), stats.NewAggregator(time.Second, 10*time.Second)}
	lat, sched = map[string][]time.Duration{}, map[string][]time.Duration{}
	fail := errors.New("crafted failure")
	for seq := 1; seq <= 5; seq++ {
		base := time.Duration(seq) * time.Second
		var batches [2][]driver.Result
		for i := range 100 + 10*seq {
			d := resnetLatencies[i%len(resnetLatencies)]
			batches[0] = append(batches[0], driver.Result{Scheduled: base, Sent: base, Done: base + d,
				Inferences: 2, BytesSent: 600, BytesReceived: 4000, Retries: oneIn(i, 10)})
			lat[names[0]] = append(lat[names[0]], d)
		}
		for range 3 {
			batches[0] = append(batches[0], driver.Result{Scheduled: base, Sent: base, Done: base + time.Millisecond,
				Err: fail, Code: codes.Unavailable, BytesSent: 600})
		}
		batches[0] = append(batches[0], driver.Result{Scheduled: base, Sent: base, Done: base + time.Millisecond,
			Cancelled: true, Code: codes.Canceled, BytesSent: 600})
		for i := range 40 + seq {
			d := bertLatencies[i%len(bertLatencies)]
			batches[1] = append(batches[1], driver.Result{Scheduled: base - bertScheduleLag, Sent: base, Done: base + d,
				Inferences: 1, BytesSent: 300, BytesReceived: 900, Late: i%4 == 0, Retries: oneIn(i, 5)})
			lat[names[1]] = append(lat[names[1]], d)
			sched[names[1]] = append(sched[names[1]], d+bertScheduleLag)
		}
		for range 2 {
			batches[1] = append(batches[1], driver.Result{Scheduled: base, Sent: base, Done: base + 5*time.Millisecond,
				Err: fail, Code: codes.Internal, BytesSent: 300})
		}
		rateB := 200.0
		if seq >= 4 {
			rateB = 300
		}
		loads := []stats.Load{
			{Mode: load.Concurrency, Concurrency: 4, InFlight: 4, Step: seq / 3},
			{Mode: load.Rate, Rate: rateB, Distribution: load.Constant, InFlight: 2 + seq%2, Step: seq / 3},
		}
		s := stats.Snapshot{Seq: seq, Elapsed: base, Interval: time.Second, Models: make([]stats.Model, 2)}
		for i, name := range names {
			all.Add(batches[i])
			aggs[i].Add(batches[i])
			var ms stats.Snapshot
			if err := aggs[i].Tick(time.Second, i == 1, &ms); err != nil {
				t.Fatal(err)
			}
			s.Models[i] = stats.Model{Name: name, Load: loads[i], Tick: ms.Tick, Window: ms.Window, Run: ms.Run,
				Histogram: ms.Histogram, ScheduledHistogram: ms.ScheduledHistogram}
		}
		if err := all.Tick(time.Second, true, &s); err != nil {
			t.Fatal(err)
		}
		s.Load = stats.AggregateLoad(loads)
		s.System = stats.SystemStats{ProcessCPU: 0.1 * float64(seq), NumCPU: 4}
		snaps = append(snaps, s)
	}
	return snaps, lat, sched
}

// modelTicks is model i's part of each snapshot, as a snapshot of its own.
func modelTicks(snaps []stats.Snapshot, i int) []stats.Snapshot {
	out := make([]stats.Snapshot, len(snaps))
	for j := range snaps {
		out[j] = snaps[j].ModelView(i)
	}
	return out
}

// checkLatencies compares a histogram bucket by bucket with the latencies it
// should hold, and its sum with theirs.
func checkLatencies(t *testing.T, what string, h *dto.Histogram, ds []time.Duration) {
	t.Helper()
	if h.GetSampleCount() != uint64(len(ds)) {
		t.Errorf("%s: count %d, want %d", what, h.GetSampleCount(), len(ds))
	}
	var sum float64
	for _, d := range ds {
		sum += d.Seconds()
	}
	if math.Abs(h.GetSampleSum()-sum) > 1e-6*sum {
		t.Errorf("%s: sum %v s, want %v", what, h.GetSampleSum(), sum)
	}
	for _, le := range DefaultBuckets {
		var want uint64
		for _, d := range ds {
			if d.Seconds() <= le {
				want++
			}
		}
		if got := cumulative(t, h, le); got != want {
			t.Errorf("%s le=%v: %d, want %d", what, le, got, want)
		}
	}
}

// TestSeveralModels feeds a crafted run over two models, scraping over
// HTTP all along: each model's series hold the sums of its own ticks and
// its own latencies bucket by bucket, the models' counters add up to the
// run's totals, the gauges are each model's last, and the run-wide metrics
// have no model label.
func TestSeveralModels(t *testing.T) {
	snaps, lat, sched := twoModelsRun(t)
	names := []string{"resnet50", "bert"}
	e, err := New(Options{Models: names, Worker: "1"})
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, e)

	// Scrapes race with Add, as Prometheus' would; no counter goes back.
	stop, scraped := make(chan struct{}), make(chan error, 1)
	go func() {
		prev := map[string]float64{}
		for {
			select {
			case <-stop:
				scraped <- nil
				return
			default:
			}
			fams, err := scrape(url)
			if err != nil {
				scraped <- err
				return
			}
			for _, m := range fams[MetricRequests].GetMetric() {
				name, v := labelsOf(m)["model"], m.GetCounter().GetValue()
				if v < prev[name] {
					scraped <- errors.New("requests of " + name + " went backwards")
					return
				}
				prev[name] = v
			}
		}
	}()
	for _, s := range snaps {
		e.Add(s)
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	if err := <-scraped; err != nil {
		t.Fatal(err)
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}

	fams := mustScrape(t, url)
	whole := sumTicks(snaps)
	if whole.successes == 0 || whole.cancelled == 0 || whole.late == 0 || whole.retries == 0 || len(whole.byCode) != 2 {
		t.Fatalf("the crafted run lacks something to count: %+v", whole)
	}
	var added sums
	added.byCode = map[string]int64{}
	last := snaps[len(snaps)-1]
	for i, name := range names {
		labels := map[string]string{"model": name, "worker": "1"}
		own := sumTicks(modelTicks(snaps, i))
		checkCounters(t, fams, own, labels)
		added.requests += int64(counter(t, fams, MetricRequests, labels))
		added.successes += int64(counter(t, fams, MetricSuccesses, labels))
		added.inferences += int64(counter(t, fams, MetricInferences, labels))
		added.cancelled += int64(counter(t, fams, MetricCancelled, labels))
		added.retries += int64(counter(t, fams, MetricRetries, labels))
		added.late += int64(counter(t, fams, MetricLateSends, labels))
		added.bytesSent += int64(counter(t, fams, MetricBytesSent, labels))
		added.bytesReceived += int64(counter(t, fams, MetricBytesReceived, labels))
		for code := range own.byCode {
			added.byCode[code] += int64(counter(t, fams, MetricErrors, map[string]string{"model": name, "code": code}))
		}

		checkLatencies(t, name+" from the send", histogram(t, fams, MetricLatency, labels), lat[name])
		if own.scheduled > 0 {
			checkLatencies(t, name+" from the schedule", histogram(t, fams, MetricScheduledLatency, labels), sched[name])
		}

		m := last.Models[i]
		if got := gauge(t, fams, MetricInFlight, labels); got != float64(m.Load.InFlight) {
			t.Errorf("%s in flight = %v, want %d", name, got, m.Load.InFlight)
		}
		mode := map[string]string{"model": name, "mode": string(m.Load.Mode)}
		if got := gauge(t, fams, MetricLoadTarget, mode); got != m.Load.Target().Level() {
			t.Errorf("%s load target = %v, want %v", name, got, m.Load.Target().Level())
		}
	}
	if n := len(fams[MetricScheduledLatency].GetMetric()); n != 1 {
		t.Errorf("%d series of %s; only bert is open-loop", n, MetricScheduledLatency)
	}
	if got := gauge(t, fams, MetricLoadTarget, map[string]string{"model": "bert"}); got != 300 {
		t.Errorf("bert's load target = %v, want its last rate 300", got)
	}

	// The models add up to the run's totals, which come from an aggregator
	// of their own.
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{MetricRequests, added.requests, whole.requests},
		{MetricSuccesses, added.successes, whole.successes},
		{MetricInferences, added.inferences, whole.inferences},
		{MetricCancelled, added.cancelled, whole.cancelled},
		{MetricRetries, added.retries, whole.retries},
		{MetricLateSends, added.late, whole.late},
		{MetricBytesSent, added.bytesSent, whole.bytesSent},
		{MetricBytesReceived, added.bytesReceived, whole.bytesReceived},
	} {
		if c.got != c.want {
			t.Errorf("%s over the models = %d, the run's total %d", c.name, c.got, c.want)
		}
	}
	for code, n := range whole.byCode {
		if added.byCode[code] != n {
			t.Errorf("%s{code=%q} over the models = %d, the run's total %d", MetricErrors, code, added.byCode[code], n)
		}
	}
	var count uint64
	for _, m := range fams[MetricLatency].GetMetric() {
		count += m.GetHistogram().GetSampleCount()
	}
	if want := whole.successes; count != uint64(want) {
		t.Errorf("latency count over the models = %d, the run's successes %d", count, want)
	}

	// Run-wide metrics: one series, no model label, the last tick's.
	for name, want := range map[string]float64{
		MetricLoadStep:   float64(last.Load.Step),
		MetricProcessCPU: last.System.ProcessCPU,
	} {
		f := fams[name]
		if len(f.GetMetric()) != 1 {
			t.Fatalf("%s: %d series, want 1", name, len(f.GetMetric()))
		}
		m := f.GetMetric()[0]
		if l := labelsOf(m); len(l) != 1 || l["worker"] != "1" {
			t.Errorf("%s labels %v, want only worker", name, l)
		}
		if got := m.GetGauge().GetValue(); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if last.Load.Step == 0 {
		t.Fatal("the crafted run's last step is 0: the step is not checked")
	}
	// Every per-request series names one of the models.
	for name, f := range fams {
		if name == MetricLoadStep || name == MetricProcessCPU || name == MetricLoadApplied || name == MetricPaused {
			continue
		}
		for _, m := range f.GetMetric() {
			if model := labelsOf(m)["model"]; model != "resnet50" && model != "bert" {
				t.Errorf("%s%v: model %q", name, labelsOf(m), model)
			}
		}
	}
}

// TestSeveralModelsBeforeTicks: the models named at New have their
// counters at zero from the first scrape, and no gauges yet.
func TestSeveralModelsBeforeTicks(t *testing.T) {
	e, err := New(Options{Models: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	fams := mustScrape(t, serve(t, e))
	for _, name := range []string{"a", "b"} {
		if got := counter(t, fams, MetricRequests, map[string]string{"model": name}); got != 0 {
			t.Errorf("requests of %s = %v before any tick", name, got)
		}
		if h := histogram(t, fams, MetricLatency, map[string]string{"model": name}); h.GetSampleCount() != 0 {
			t.Errorf("latency count of %s = %d before any tick", name, h.GetSampleCount())
		}
	}
	for _, g := range []string{MetricInFlight, MetricLoadTarget, MetricProcessCPU, MetricLoadStep} {
		if _, ok := fams[g]; ok {
			t.Errorf("gauge %s exported before any tick", g)
		}
	}
}

// TestSeveralModelsByName: models are told apart by name, not place: a
// tick that lists them in another order, or names a model not given at
// New, still counts each under its own name.
func TestSeveralModelsByName(t *testing.T) {
	e, err := New(Options{Models: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	tick := func(reqs ...any) stats.Snapshot {
		var s stats.Snapshot
		for i := 0; i < len(reqs); i += 2 {
			n := int64(reqs[i+1].(int))
			s.Models = append(s.Models, stats.Model{Name: reqs[i].(string), Tick: stats.ClientStats{Requests: n, Successes: n}})
		}
		return s
	}
	e.Add(tick("a", 1, "b", 10))
	e.Add(tick("b", 20, "a", 2))
	e.Add(tick("c", 300, "a", 4))
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	fams := mustScrape(t, serve(t, e))
	for name, want := range map[string]float64{"a": 7, "b": 30, "c": 300} {
		if got := counter(t, fams, MetricRequests, map[string]string{"model": name}); got != want {
			t.Errorf("requests of %s = %v, want %v", name, got, want)
		}
	}
}

// TestSeveralModelsErrors: an undecodable histogram names its tick and
// model; a tick without Models is reported, and its requests left out.
func TestSeveralModelsErrors(t *testing.T) {
	e, err := New(Options{Models: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	e.Add(stats.Snapshot{Seq: 3, Models: []stats.Model{
		{Name: "a", Tick: stats.ClientStats{Requests: 2, Successes: 2}},
		{Name: "b", Tick: stats.ClientStats{Requests: 5, Successes: 5}, Histogram: "not a histogram"},
	}})
	if err := e.Err(); err == nil || !strings.Contains(err.Error(), "tick 3: model b") {
		t.Errorf("Err() = %v, want one naming tick 3 and model b", err)
	}
	fams := mustScrape(t, serve(t, e))
	if got := counter(t, fams, MetricSuccesses, map[string]string{"model": "b"}); got != 5 {
		t.Errorf("successes of b = %v, want 5", got)
	}

	e, err = New(Options{Models: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	e.Add(stats.Snapshot{Seq: 4, Tick: stats.ClientStats{Requests: 9}})
	if err := e.Err(); err == nil || !strings.Contains(err.Error(), "tick 4 has no per-model statistics") {
		t.Errorf("Err() = %v, want one saying that tick 4 has no models", err)
	}
}

// TestOneModelByEitherName: Models with one name serves exactly what
// Model does.
func TestOneModelByEitherName(t *testing.T) {
	snaps, _, _ := twoModelsRun(t)
	var bodies []string
	for _, opts := range []Options{{Model: "resnet50", Worker: "0"}, {Models: []string{"resnet50"}, Worker: "0"}} {
		e, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range modelTicks(snaps, 0) {
			e.Add(s)
		}
		resp, err := http.Get(serve(t, e))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(b))
	}
	if bodies[0] != bodies[1] {
		t.Errorf("Models with one name serves\n%s\nModel serves\n%s", bodies[1], bodies[0])
	}
	if !strings.Contains(bodies[0], `tritontop_requests_total{model="resnet50",worker="0"} `) {
		t.Errorf("no requests of resnet50 in\n%s", bodies[0])
	}
}

// TestSeveralModelsPedantic gathers a run over two models through a
// pedantic registry.
func TestSeveralModelsPedantic(t *testing.T) {
	snaps, _, _ := twoModelsRun(t)
	e, err := New(Options{Models: []string{"resnet50", "bert"}, Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		e.Add(s)
	}
	checkPedantic(t, e)
}

func TestNewRejectsModels(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"model and models", Options{Model: "a", Models: []string{"a", "b"}}, "give one"},
		{"model twice", Options{Models: []string{"a", "b", "a"}}, "model a named twice"},
		{"model without a name", Options{Models: []string{"a", ""}}, "needs a name"},
		{"bad model label", Options{Models: []string{"a", "\xff"}}, "UTF-8"},
		{"bad model", Options{Model: "\xff"}, "UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New(%+v) = %v, want an error about %q", c.opts, err, c.want)
			}
		})
	}
}

// oneIn is 1 for every n-th i, else 0.
func oneIn(i, n int) uint8 {
	if i%n == 0 {
		return 1
	}
	return 0
}

// checkPedantic gathers e through a pedantic registry, which checks every
// metric collected against the descriptions and the exposition rules.
func checkPedantic(t *testing.T, e *Exporter) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}
