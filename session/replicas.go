package session

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// maxReplicas bounds -u: each replica is a connection pool, a statistics
// poller and a metrics scraper of its own, read every tick.
const maxReplicas = 64

// servers are the run's server addresses: every -u, or the one.
func (f *Config) servers() []string {
	if len(f.URLs) > 1 {
		return f.URLs
	}
	return []string{f.URL}
}

// metricsURLFor is the metrics endpoint of server i: its --metrics-url, or
// its host at Triton's metrics port.
func (f *Config) metricsURLFor(i int) string {
	switch {
	case len(f.URLs) > 1 && len(f.MetricsURLs) == len(f.URLs):
		return f.MetricsURLs[i]
	case len(f.URLs) <= 1 && f.metricsURL != "":
		return f.metricsURL
	}
	return triton.MetricsURL(f.servers()[i])
}

// takeServers reads -u, --metrics-url and --balance: one server or
// several replicas of the model, each with its metrics endpoint.
func takeServers(f *Config) error {
	switch len(f.URLs) {
	case 0:
		if f.URL != "" {
			break
		}
		f.URL = "localhost:8001"
		if f.Protocol == "http" {
			f.URL = "localhost:8000"
		}
	case 1:
		f.URL, f.URLs = f.URLs[0], nil
	default:
		f.URL = f.URLs[0]
	}
	n := len(f.servers())
	switch {
	case n > maxReplicas:
		return fmt.Errorf("-u given %d times: at most %d replicas per run", n, maxReplicas)
	case n == 1 && len(f.MetricsURLs) > 1:
		return fmt.Errorf("--metrics-url given twice (%s and %s): one server (-u), one metrics endpoint", textsafe.Quote(f.MetricsURLs[0]), textsafe.Quote(f.MetricsURLs[1]))
	case n > 1 && len(f.MetricsURLs) > 0 && len(f.MetricsURLs) != n:
		return fmt.Errorf("--metrics-url given %d times for %d servers (-u): give one per -u, in the same order, or none for each server's host at port %d",
			len(f.MetricsURLs), n, triton.DefaultMetricsPort)
	}
	if len(f.MetricsURLs) > 0 {
		f.metricsURL = f.MetricsURLs[0]
	}
	switch driver.Balance(f.Balance) {
	case driver.LeastOutstanding, driver.RoundRobin:
	default:
		return fmt.Errorf("unknown --balance %s: use least or rr", textsafe.Quote(f.Balance))
	}
	if f.Given["balance"] && n == 1 {
		return fmt.Errorf("--balance spreads requests over several servers: give -u once per replica, or drop --balance")
	}
	return nil
}

// checkReplicas refuses a replica given twice, replicas whose metrics
// would be read from one endpoint (two -u on one host both default to its
// port 8002), and fewer streams than replicas.
func checkReplicas(f *Config) error {
	if len(f.URLs) < 2 {
		return nil
	}
	if f.Streaming && f.Given["streams"] && f.Streams < len(f.URLs) {
		return fmt.Errorf("--streams %d is fewer than the %d replicas (-u): a stream stays on one replica, so give at least %d",
			f.Streams, len(f.URLs), len(f.URLs))
	}
	seen := map[string]string{}
	for _, u := range f.URLs {
		k := endpointKey(u, f.Protocol)
		if first, ok := seen[k]; ok {
			return fmt.Errorf("-u %s given twice (as %s and %s): give each replica once", textsafe.Excerpt(k, maxQuoted), textsafe.Quote(first), textsafe.Quote(u))
		}
		seen[k] = u
	}
	metrics := map[string]string{}
	for i, u := range f.URLs {
		m := f.metricsURLFor(i)
		if other, ok := metrics[m]; ok {
			if len(f.MetricsURLs) == 0 {
				return fmt.Errorf("-u %s and -u %s would both read metrics from %s (each server's host at port %d): give --metrics-url once per -u, in the same order",
					textsafe.Excerpt(other, maxQuoted), textsafe.Excerpt(u, maxQuoted), textsafe.Excerpt(m, maxQuoted), triton.DefaultMetricsPort)
			}
			return fmt.Errorf("--metrics-url %s given for both -u %s and -u %s: each replica has its own", textsafe.Excerpt(m, maxQuoted), textsafe.Excerpt(other, maxQuoted), textsafe.Excerpt(u, maxQuoted))
		}
		metrics[m] = u
	}
	return nil
}

// endpointKey is host:port of a server address, so that the same server
// written two ways is found twice.
func endpointKey(raw, protocol string) string {
	s := strings.ToLower(strings.TrimSpace(raw))
	if i := strings.Index(s, "://"); i >= 0 {
		if scheme := s[:i]; scheme == "http" || scheme == "https" {
			protocol = "http"
		}
		s = s[i+3:]
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		port := triton.DefaultGRPCPort
		if protocol == "http" {
			port = triton.DefaultHTTPPort
		}
		s = net.JoinHostPort(strings.Trim(s, "[]"), strconv.Itoa(port))
	}
	return s
}

// connectReplicas dials the replicas after the first, which connect
// dialed.
func connectReplicas(ctx context.Context, f *Config, opts triton.Options, t *target) error {
	urls := f.servers()
	if len(urls) < 2 {
		return nil
	}
	t.replicas = make([]triton.Client, len(urls))
	t.replicas[0] = t.client
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i := 1; i < len(urls); i++ {
		wg.Go(func() {
			c, err := triton.Dial(ctx, urls[i], opts)
			if err != nil {
				errs[i] = fmt.Errorf("replica %s: %w", textsafe.Excerpt(urls[i], maxQuoted), err)
				return
			}
			t.replicas[i] = c
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkReplicasServe checks that every replica after the first (which the
// model was read from) serves the model with the same inputs and outputs:
// requests built for one must be valid for all.
func checkReplicasServe(ctx context.Context, f *Config, t *target) error {
	urls := f.servers()
	if len(t.replicas) < 2 {
		return nil
	}
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i := 1; i < len(urls); i++ {
		wg.Go(func() {
			md, err := t.replicas[i].ModelMetadata(ctx, f.Model, f.ModelVersion)
			if err != nil {
				errs[i] = fmt.Errorf("replica %s: metadata of model %s: %w (every -u must serve the model)", textsafe.Excerpt(urls[i], maxQuoted), textsafe.Quote(f.Model), err)
				return
			}
			if !sameTensors(md, t.metadata) {
				errs[i] = fmt.Errorf("replica %s serves model %s with other inputs or outputs than %s: replicas must serve the same model",
					textsafe.Excerpt(urls[i], maxQuoted), textsafe.Quote(f.Model), textsafe.Excerpt(urls[0], maxQuoted))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sameTensors reports whether two servers describe a model's inputs and
// outputs alike.
func sameTensors(a, b *pb.ModelMetadataResponse) bool {
	if len(a.GetInputs()) != len(b.GetInputs()) || len(a.GetOutputs()) != len(b.GetOutputs()) {
		return false
	}
	for i := range a.GetInputs() {
		if !proto.Equal(a.GetInputs()[i], b.GetInputs()[i]) {
			return false
		}
	}
	for i := range a.GetOutputs() {
		if !proto.Equal(a.GetOutputs()[i], b.GetOutputs()[i]) {
			return false
		}
	}
	return true
}

// close closes the clients of every server.
func (t *target) close() {
	t.closeSharedMemory()
	if len(t.replicas) == 0 {
		t.client.Close()
		return
	}
	for _, c := range t.replicas {
		if c != nil {
			c.Close()
		}
	}
}

// driverClient is what the driver sends through: the server's client, or
// a Balancer over the replicas' (returned too, to be closed), with at least
// one stream per replica when streaming, since a stream stays on one.
func driverClient(f *Config, t *target) (driver.Client, int, *driver.Balancer, error) {
	if len(t.replicas) < 2 {
		return t.client, f.Streams, nil, nil
	}
	rc := make([]driver.ReplicaClient, len(t.replicas))
	for i, c := range t.replicas {
		rc[i] = c
	}
	b, err := driver.NewBalancer(rc, driver.BalancerOptions{Policy: driver.Balance(f.Balance)})
	if err != nil {
		return nil, 0, nil, UsageError{Err: err}
	}
	streams := f.Streams
	if streams == 0 {
		streams = max(driver.DefaultStreams, b.Len())
	}
	return b, streams, b, nil
}

// serverSources are what the collector reads of the servers: the one
// server's statistics and metrics, or each replica's. The statistics'
// baselines are taken now, all at once; a server that does not answer is
// warned about and read again every tick.
// In a run over several models, each model's statistics are read from
// each server (the last result, by model then server) and each server's
// metrics once, for all of them.
func serverSources(ctx context.Context, f *Config, t *target, bal *driver.Balancer, stderr io.Writer) (
	*stats.ServerPoller, *stats.MetricsScraper, []stats.ReplicaSource, [][]*stats.ServerPoller) {
	models := t.each()
	scraper := func(url string) *stats.MetricsScraper {
		first := models[0].flags
		m := stats.NewMetricsScraper(url, &http.Client{Timeout: 2 * f.Tick}, first.Model, first.ModelVersion)
		for _, mt := range models[1:] {
			m.AlsoPending(mt.flags.Model, mt.flags.ModelVersion)
		}
		return m
	}
	clients := t.replicas
	if bal == nil {
		clients = []triton.Client{t.client}
	}
	perModel := make([][]*stats.ServerPoller, len(models))
	for m, mt := range models {
		for _, c := range clients {
			p := stats.NewServerPoller(c, mt.flags.Model, mt.flags.ModelVersion)
			p.SetComposing(mt.composing)
			perModel[m] = append(perModel[m], p)
		}
	}
	var (
		poller   *stats.ServerPoller
		metrics  *stats.MetricsScraper
		replicas []stats.ReplicaSource
	)
	if bal != nil {
		for i, u := range f.servers() {
			replicas = append(replicas, stats.ReplicaSource{
				URL:     u,
				Metrics: scraper(f.metricsURLFor(i)),
				Up:      func() bool { return bal.Up(i) },
			})
			if !f.several() {
				replicas[i].Server = perModel[0][i]
			}
		}
	} else {
		metrics = scraper(f.metricsURLFor(0))
		if !f.several() {
			poller = perModel[0][0]
		}
	}
	primeCtx, cancel := context.WithTimeout(ctx, f.ConnectTimeout)
	defer cancel()
	errs := make([][]error, len(models))
	var wg sync.WaitGroup
	for m, ps := range perModel {
		errs[m] = make([]error, len(ps))
		for i, p := range ps {
			wg.Go(func() { errs[m][i] = p.Prime(primeCtx) })
		}
	}
	wg.Wait()
	for m, es := range errs {
		for i, err := range es {
			of := ""
			switch {
			case f.several() && bal != nil:
				of = " of " + models[m].flags.Model + " on " + f.servers()[i]
			case f.several():
				of = " of " + models[m].flags.Model
			case bal != nil:
				of = " of " + f.servers()[i]
			}
			if err != nil {
				fmt.Fprintf(stderr, "tritontop: warning: server statistics%s unavailable: %s\n", of, oneLine(err.Error()))
			}
		}
	}
	if !f.several() {
		return poller, metrics, replicas, nil
	}
	return poller, metrics, replicas, perModel
}

// serverLabel names the servers in the dashboard's header: the address,
// or how many replicas and how requests are spread.
func serverLabel(urls []string, balance string) string {
	if len(urls) < 2 {
		return strings.Join(urls, "")
	}
	how := "least outstanding"
	if balance == string(driver.RoundRobin) {
		how = "round robin"
	}
	return strconv.Itoa(len(urls)) + " replicas, " + how
}
