package promexport

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton"
)

// TestFrozenRecord feeds the frozen schema-1 run file and checks every
// counter and the latency histogram bucket by bucket: its ticks hold 100
// requests at 1 ms, 300 at 3 ms and 250 at 2 ms.
func TestFrozenRecord(t *testing.T) {
	r, err := record.Open("../record/testdata/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e, err := New(Options{Model: "resnet50", Worker: "0"})
	if err != nil {
		t.Fatal(err)
	}
	var snaps []stats.Snapshot
	for {
		s, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		e.Add(s)
		snaps = append(snaps, s)
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	fams := mustScrape(t, serve(t, e))
	labels := map[string]string{"model": "resnet50", "worker": "0"}
	checkCounters(t, fams, sumTicks(snaps), labels)

	h := histogram(t, fams, MetricLatency, labels)
	if h.GetSampleCount() != 650 {
		t.Errorf("latency count = %d, want 650 successes", h.GetSampleCount())
	}
	if want := 0.1 + 0.9 + 0.5; math.Abs(h.GetSampleSum()-want) > 1e-9 {
		t.Errorf("latency sum = %v s, want %v", h.GetSampleSum(), want)
	}
	for _, c := range []struct {
		le   float64
		want uint64
	}{
		{0.0005, 0}, {0.001, 100}, {0.002, 350}, {0.005, 650}, {60, 650},
	} {
		if got := cumulative(t, h, c.le); got != c.want {
			t.Errorf("latency le=%v: %d, want %d", c.le, got, c.want)
		}
	}
	if _, ok := fams[MetricScheduledLatency]; ok {
		t.Errorf("closed-loop run exports %s", MetricScheduledLatency)
	}

	last := snaps[len(snaps)-1]
	if got := gauge(t, fams, MetricLoadTarget, map[string]string{"mode": "concurrency"}); got != 2 {
		t.Errorf("load target = %v, want concurrency 2", got)
	}
	if got := gauge(t, fams, MetricInFlight, labels); got != float64(last.Load.InFlight) {
		t.Errorf("in flight = %v, want %d", got, last.Load.InFlight)
	}
	if got := gauge(t, fams, MetricProcessCPU, labels); got != last.System.ProcessCPU {
		t.Errorf("process CPU = %v, want %v", got, last.System.ProcessCPU)
	}
	// Every series carries the worker's labels and nothing per request.
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			got := labelsOf(m)
			if got["model"] != "resnet50" || got["worker"] != "0" {
				t.Errorf("%s%v lacks the model or worker label", name, got)
			}
			for k := range got {
				switch k {
				case "model", "worker", "code", "mode":
				default:
					t.Errorf("%s has an unexpected label %s", name, k)
				}
			}
		}
	}
}

// TestAgainstSimulator runs the real pipeline, an open-loop driver against
// the simulator failing a fifth of its requests, through a Collector into
// the Exporter, scraping over HTTP all along. Counters never go backwards
// and at the end equal the sums over the ticks and the run's own totals;
// both histograms count every success.
func TestAgainstSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("2 s load run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := sim.Start(ctx, sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{Faults: sim.Faults{ErrorRate: 0.2}, Seed: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client, err := triton.Dial(ctx, srv.GRPCAddr(), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	const model = "resnet50"
	md, err := client.ModelMetadata(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := client.ModelConfig(ctx, model, "")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{Data: triton.InputDataZero})
	if err != nil {
		t.Fatal(err)
	}
	drv, err := driver.New(driver.Options{Client: client, Requests: reqs,
		Load: load.Target{Mode: load.Rate, Rate: 200}})
	if err != nil {
		t.Fatal(err)
	}
	sys, err := stats.NewSystemSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	col := stats.NewCollector(stats.CollectorOptions{
		Interval: 250 * time.Millisecond, Results: drv.Results(), Control: drv,
		Epoch: drv.Epoch(), System: sys,
	})

	e, err := New(Options{Model: model, Worker: "3"})
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, e)

	// Scrapes race with Add for the whole run, as Prometheus' would.
	stopScraping := make(chan struct{})
	scraped := make(chan error, 1)
	go func() {
		var prev float64
		n := 0
		for {
			select {
			case <-stopScraping:
				if n == 0 {
					scraped <- errors.New("no scrape during the run")
					return
				}
				scraped <- nil
				return
			case <-time.After(50 * time.Millisecond):
			}
			fams, err := scrape(url)
			if err != nil {
				scraped <- err
				return
			}
			n++
			v := fams[MetricRequests].GetMetric()[0].GetCounter().GetValue()
			if v < prev {
				scraped <- errors.New("requests counter went backwards")
				return
			}
			prev = v
		}
	}()

	var mu sync.Mutex
	var snaps []stats.Snapshot
	driverDone := make(chan error, 1)
	go func() { driverDone <- drv.Run(ctx) }()
	// A drain long enough for a loaded host to finish what is in flight:
	// with a second's, a busy CI host once cut off 383 of 394 requests.
	time.AfterFunc(2*time.Second, func() { drv.Stop(20 * time.Second) })
	if err := col.Run(ctx, func(s stats.Snapshot) {
		e.Add(s)
		mu.Lock()
		snaps = append(snaps, s)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-driverDone; err != nil {
		t.Fatal(err)
	}
	close(stopScraping)
	if err := <-scraped; err != nil {
		t.Fatal(err)
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}

	s := sumTicks(snaps)
	if s.successes == 0 || s.errors == 0 {
		t.Fatalf("run had %d successes and %d errors (%d requests, %d cancelled, %d late, in %d ticks); the test needs both",
			s.successes, s.errors, s.requests, s.cancelled, s.late, len(snaps))
	}
	if s.byCode["INTERNAL"] == 0 {
		t.Fatalf("no INTERNAL errors from the simulator's error rate: %v", s.byCode)
	}
	fams := mustScrape(t, url)
	labels := map[string]string{"model": model, "worker": "3"}
	checkCounters(t, fams, s, labels)
	// The record's whole-run totals say the same (no window reset here).
	run := snaps[len(snaps)-1].Run
	if got := counter(t, fams, MetricRequests, labels); got != float64(run.Requests) {
		t.Errorf("requests = %v, the run's total says %d", got, run.Requests)
	}

	for _, name := range []string{MetricLatency, MetricScheduledLatency} {
		h := histogram(t, fams, name, labels)
		if h.GetSampleCount() != uint64(s.successes) {
			t.Errorf("%s count = %d, want %d successes", name, h.GetSampleCount(), s.successes)
		}
		if inf := cumulative(t, h, 60); inf > h.GetSampleCount() {
			t.Errorf("%s: le=60 holds %d of %d", name, inf, h.GetSampleCount())
		}
		if h.GetSampleSum() <= 0 {
			t.Errorf("%s sum = %v", name, h.GetSampleSum())
		}
	}
	// Latency from the schedule is never shorter than from the send.
	sent, sched := histogram(t, fams, MetricLatency, labels), histogram(t, fams, MetricScheduledLatency, labels)
	if sched.GetSampleSum() < sent.GetSampleSum() {
		t.Errorf("scheduled latency sum %v < sent latency sum %v", sched.GetSampleSum(), sent.GetSampleSum())
	}
	if got := gauge(t, fams, MetricLoadTarget, map[string]string{"mode": "rate"}); got != 200 {
		t.Errorf("load target = %v, want rate 200", got)
	}
}

// TestBucketsFromHDR places crafted latencies around the bounds: values
// under 2048 µs are exact in HDR, so they fall exactly; above that a value
// within HDR's 0.1% of a bound is counted under it, as documented.
func TestBucketsFromHDR(t *testing.T) {
	// The geometry of the Collector's histograms: 1 µs to 1 h, 3 digits.
	h := hdrhistogram.NewPacked(1, 3_600_000_000, 3)
	for _, v := range []int64{
		400,        // 0.4 ms: le 0.0005
		500,        // exactly on 0.5 ms: le 0.0005
		501,        // just above: le 0.001
		1000, 1000, // on 1 ms
		1999,          // le 0.002
		5000,          // on 5 ms
		5003,          // within HDR's resolution of 5 ms: counted under it
		5010,          // clearly above: le 0.01
		59_000_000,    // 59 s: le 60
		120_000_000,   // 2 min: +Inf only
		3_600_000_000, // the recorder's one-hour clamp: +Inf
	} {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	b := newBucketCounts(len(DefaultBuckets))
	b.add(DefaultBuckets, h, stats.Latency{})
	want := map[float64]uint64{
		0.0005: 2, 0.001: 5, 0.002: 6, 0.005: 8, 0.01: 9, 0.02: 9,
		30: 9, 60: 10,
	}
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	if err := b.metric(e.descs.latency, DefaultBuckets).Write(&m); err != nil {
		t.Fatal(err)
	}
	hist := m.GetHistogram()
	for le, n := range want {
		if got := cumulative(t, hist, le); got != n {
			t.Errorf("le=%v: %d, want %d", le, got, n)
		}
	}
	if hist.GetSampleCount() != 12 {
		t.Errorf("count = %d, want 12 (the two over 60 s in +Inf)", hist.GetSampleCount())
	}
	// Without an exact mean of the same count, the sum is HDR's.
	if want := h.Mean() / 1e6 * 12; math.Abs(hist.GetSampleSum()-want) > 1e-9 {
		t.Errorf("sum = %v, want %v", hist.GetSampleSum(), want)
	}
}

// TestEmptyExporter: before the first tick the counters exist at zero, the
// latency histogram is empty, and no gauge claims a value.
func TestEmptyExporter(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	fams := mustScrape(t, serve(t, e))
	if got := counter(t, fams, MetricRequests, nil); got != 0 {
		t.Errorf("requests = %v before any tick", got)
	}
	if h := histogram(t, fams, MetricLatency, nil); h.GetSampleCount() != 0 {
		t.Errorf("latency count = %d before any tick", h.GetSampleCount())
	}
	for _, g := range []string{MetricInFlight, MetricLoadTarget, MetricProcessCPU, MetricLoadStep} {
		if _, ok := fams[g]; ok {
			t.Errorf("gauge %s exported before any tick", g)
		}
	}
	for _, m := range fams[MetricRequests].GetMetric() {
		if len(m.GetLabel()) != 0 {
			t.Errorf("labels %v without a model or worker set", labelsOf(m))
		}
	}
}

// TestBadHistogram: a tick whose histogram does not decode still counts,
// is left out of the latency histogram, and Err says which tick.
func TestBadHistogram(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Add(stats.Snapshot{Seq: 7, Tick: stats.ClientStats{Requests: 5, Successes: 5}, Histogram: "not a histogram"})
	if err := e.Err(); err == nil || !strings.Contains(err.Error(), "tick 7") {
		t.Errorf("Err() = %v, want one naming tick 7", err)
	}
	fams := mustScrape(t, serve(t, e))
	if got := counter(t, fams, MetricSuccesses, nil); got != 5 {
		t.Errorf("successes = %v, want 5", got)
	}
	if h := histogram(t, fams, MetricLatency, nil); h.GetSampleCount() != 0 {
		t.Errorf("latency count = %d from an undecodable histogram", h.GetSampleCount())
	}
}

// TestPedantic gathers through a pedantic registry, which checks every
// metric collected against the descriptions and the exposition rules.
func TestPedantic(t *testing.T) {
	e, err := New(Options{Model: "m", Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	e.Add(stats.Snapshot{
		Load: stats.Load{Mode: load.Rate, Rate: 50, InFlight: 3, Step: 2},
		Tick: stats.ClientStats{Requests: 3, Errors: 3, ErrorsByCode: []stats.ErrorCount{
			{Code: "UNAVAILABLE", Count: 2}, {Code: "INTERNAL", Count: 1}}, Scheduled: &stats.Latency{}},
	})
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"empty buckets", Options{Buckets: []float64{}}, "none given"},
		{"negative bucket", Options{Buckets: []float64{-1, 1}}, "positive"},
		{"infinite bucket", Options{Buckets: []float64{1, math.Inf(1)}}, "finite"},
		{"NaN bucket", Options{Buckets: []float64{math.NaN()}}, "positive"},
		{"unsorted buckets", Options{Buckets: []float64{1, 0.5}}, "increasing"},
		{"bad worker label", Options{Worker: "\xff"}, "UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New(%+v) = %v, want an error about %q", c.opts, err, c.want)
			}
		})
	}
}

// TestServeShutsDownWithContext: the endpoint answers, then stops when its
// context ends; a port in use is reported at Serve with the flag to change.
func TestServeShutsDownWithContext(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := e.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr().String()
	if _, err := scrape(url + MetricsPath); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /other = %s, want 404", resp.Status)
	}

	_, err = e.Serve(context.Background(), srv.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "--prometheus-addr") {
		t.Errorf("Serve on a port in use = %v, want an error naming --prometheus-addr", err)
	}

	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", srv.Addr().String(), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still listening 5 s after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close after shutdown: %v", err)
	}
}
