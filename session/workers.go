package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/promexport"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
	"github.com/tritontop/tritontop/stats"
)

// maxWorkers bounds --workers: far more machines than any cluster lends a
// load test.
const maxWorkers = 10000

// defaultScrapeInterval is Prometheus' default scrape interval: how long a
// worker keeps serving its metrics after the run.
const defaultScrapeInterval = 15 * time.Second

// workerFlags are the flags of one worker of a load that several tritontop
// processes drive together (a Kubernetes Indexed Job), and of the
// Prometheus endpoint through which a fleet is watched live.
type WorkersConfig struct {
	Count          int    // --workers; 0 without
	Index          int    // --worker-index
	StartAt        string // --start-at as given
	start          time.Time
	PrometheusAddr string
	ScrapeInterval time.Duration // --prometheus-scrape-interval

	// whole is the load of all the workers at the start, set by share.
	whole load.Target
}

// distributed reports whether the run is one worker's share.
func (w *WorkersConfig) distributed() bool { return w.Count > 0 }

// checkWorkers refuses worker flags that contradict each other or the
// load: each error is one line that says what to do.
func checkWorkers(f *Config) error {
	w := &f.Workers
	if w.StartAt != "" {
		t, err := time.Parse(time.RFC3339Nano, w.StartAt)
		if err != nil {
			return fmt.Errorf("--start-at %s is not an RFC 3339 time: give one such as 2026-05-04T12:00:00Z", textsafe.Quote(w.StartAt))
		}
		if ahead := time.Until(t); ahead > maxStartAhead {
			return fmt.Errorf("--start-at %s is %v ahead: at most %v (a typo in the date?)", w.StartAt, ahead.Round(time.Minute), maxStartAhead)
		}
		w.start = t
	}
	if w.PrometheusAddr != "" {
		if _, port, err := net.SplitHostPort(w.PrometheusAddr); err != nil || !validPort(port) {
			return fmt.Errorf("--prometheus-addr %s is not HOST:PORT: give one such as :9099 or 0.0.0.0:9099", textsafe.Quote(w.PrometheusAddr))
		}
	}
	if !w.distributed() {
		if f.Given["worker-index"] {
			return errors.New("--worker-index needs --workers N, the number of workers that share the load")
		}
		return nil
	}
	ranged := f.ConcurrencyRange != "" || f.RequestRateRange != ""
	switch {
	case w.Index >= w.Count:
		return fmt.Errorf("--worker-index %d is not one of --workers %d: use 0 to %d", w.Index, w.Count, w.Count-1)
	case ranged && !f.Given["step-duration"]:
		return errors.New("--workers with a range needs --step-duration: a stability check judged by each worker on its own share would end its steps at different times, so every worker steps on the same tick only with fixed-length steps")
	case f.BinarySearch:
		return errors.New("--binary-search cannot run on --workers: each worker would pick its next level from its own share; scan the range with --step-duration and read the merged run")
	case ranged && f.LatencyThreshold > 0:
		return errors.New("--latency-threshold cannot end a range run on --workers: each worker would stop at the first level its own share passes it; drop it and read the merged run's steps")
	case !f.Given["concurrency"] && !ranged && !f.Given["request-rate"]:
		return errors.New("--workers shares a load among processes: give the whole load with --concurrency, --request-rate or a range (tritontop plan and demo run from one process)")
	}
	return nil
}

// validPort reports whether p is a port number (0 picks a free one).
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535
}

// processes is how many processes drive the load: the limits of one
// process's load flags scale with it.
func (w *WorkersConfig) processes() int { return max(w.Count, 1) }

// perWorker qualifies a level of a range in an error: with --workers it is
// one worker's share.
func (w *WorkersConfig) perWorker() string {
	if w.distributed() {
		return " per worker"
	}
	return ""
}

// share turns the whole load of a schedule into this worker's share: a
// concurrency split as evenly as whole numbers allow (the first c mod N
// workers take one more), a rate split N ways, and each level of a range
// split the same way.
func (w *WorkersConfig) share(sc schedule) (schedule, error) {
	w.whole = sc.initial
	if !w.distributed() {
		return sc, nil
	}
	var levels []load.Target
	switch s := sc.search.(type) {
	case nil:
	case plan.Sweep:
		levels = s.Levels
	default:
		return sc, UsageError{Err: errors.New("--workers shares a load or a range of levels, not a search: tritontop plan runs from one process")}
	}
	first := sc.initial
	if len(levels) > 0 {
		first = levels[0]
	}
	if !first.Open() && first.Concurrency < w.Count {
		return sc, UsageError{Err: fmt.Errorf("concurrency %d over --workers %d leaves a worker with nothing in flight: give each worker at least one request in flight (%d or more), or fewer workers",
			first.Concurrency, w.Count, w.Count)}
	}
	sc.initial = shareOf(sc.initial, w.Count, w.Index)
	if len(levels) > 0 {
		shared := make([]load.Target, len(levels))
		for i, l := range levels {
			shared[i] = shareOf(l, w.Count, w.Index)
		}
		sw := sc.search.(plan.Sweep)
		sw.Levels = shared
		sc.search = sw
	}
	return sc, nil
}

// shareOf is worker i's share of n of the load t.
func shareOf(t load.Target, n, i int) load.Target {
	if t.Open() {
		t.Rate /= float64(n)
		return t
	}
	c := t.Concurrency
	t.Concurrency = c / n
	if i < c%n {
		t.Concurrency++
	}
	return t
}

// stamp writes into a run's header which worker of how many it is, the
// whole load, and the shared start as the run's start time.
func (w *WorkersConfig) stamp(h *record.Header) {
	if !w.start.IsZero() && w.start.After(h.StartTime) {
		h.StartTime = w.start
	}
	if !w.distributed() {
		return
	}
	h.Worker = &record.Worker{Index: w.Index, Count: w.Count, Load: stats.LoadOf(load.State{Target: w.whole}), StartAt: w.start}
}

// waitForStart waits for --start-at, saying so; a time past starts at once
// with a note. It returns false when a signal came first.
func (w *WorkersConfig) waitForStart(ctx context.Context, stderr io.Writer) bool {
	if w.start.IsZero() {
		return true
	}
	who := "tritontop"
	if w.distributed() {
		who = fmt.Sprintf("worker %d of %d", w.Index, w.Count)
	}
	wait := time.Until(w.start)
	if wait <= 0 {
		fmt.Fprintf(stderr, "tritontop: --start-at %s was %v ago: %s starts now, out of step with workers that started on time\n",
			w.start.Format(time.RFC3339), (-wait).Round(time.Millisecond), who)
		return true
	}
	fmt.Fprintf(stderr, "tritontop: %s waits until %s (%v) to start\n", who, w.start.Format(time.RFC3339Nano), wait.Round(time.Millisecond))
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		fmt.Fprintln(stderr, "tritontop: interrupted while waiting for --start-at: nothing was measured")
		return false
	}
}

// promEndpoint is a run's Prometheus endpoint: an exporter fed as one more
// sink of the run's snapshots, and the server it is scraped through.
type promEndpoint struct {
	exp    *promexport.Exporter
	srv    *promexport.Server
	linger time.Duration
}

// servePrometheus binds --prometheus-addr before the run, so that a port in
// use is a usage error and not a run without its metrics; nil without it.
// models are the run's: with several, each has its own series.
func (w *WorkersConfig) servePrometheus(ctx context.Context, models []string, stderr io.Writer) (*promEndpoint, error) {
	if w.PrometheusAddr == "" {
		return nil, nil
	}
	opts := promexport.Options{Models: models}
	if w.distributed() {
		opts.Worker = strconv.Itoa(w.Index)
	}
	exp, err := promexport.New(opts)
	if err != nil {
		return nil, UsageError{Err: fmt.Errorf("--prometheus-addr: %w", err)}
	}
	srv, err := exp.Serve(ctx, w.PrometheusAddr)
	if err != nil {
		return nil, UsageError{Err: err}
	}
	fmt.Fprintf(stderr, "tritontop: serving Prometheus metrics at http://%s%s\n", srv.Addr(), promexport.MetricsPath)
	return &promEndpoint{exp: exp, srv: srv, linger: w.ScrapeInterval}, nil
}

// sink is the exporter as a sink of the run, nil without an endpoint.
func (p *promEndpoint) sink() report.Sink {
	if p == nil {
		return nil
	}
	return p.exp
}

// finish keeps serving for one scrape interval after the run, so that
// Prometheus reads the last ticks, unless a signal ended the run; then it
// closes the endpoint.
func (p *promEndpoint) finish(ctx context.Context, stderr io.Writer) {
	if p == nil {
		return
	}
	defer p.close()
	if p.linger <= 0 || ctx.Err() != nil {
		return
	}
	fmt.Fprintf(stderr, "tritontop: serving Prometheus metrics %v more, so that the last ticks are scraped (Ctrl-C ends it)\n", p.linger)
	t := time.NewTimer(p.linger)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// close stops the endpoint; it may be called more than once.
func (p *promEndpoint) close() {
	if p != nil {
		_ = p.srv.Close()
	}
}
