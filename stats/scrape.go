package stats

import (
	"context"
	"net/http"

	"github.com/tritontop/tritontop/triton"
)

// MetricsScraper reads Triton's metrics endpoint once per tick: the server's
// GPUs, its CPU and the pending requests of the model under load. It is used
// by one goroutine at a time.
type MetricsScraper struct {
	url     string
	client  *http.Client
	model   string
	version string
	// more are the other models of a run over several, whose pending
	// requests add to the first's.
	more [][2]string
}

// NewMetricsScraper returns a scraper of the metrics at url (for example
// "http://localhost:8002/metrics"). A nil client means http.DefaultClient;
// each Scrape is bounded by its context. model and version select the
// pending-request gauge; an empty version sums the model's versions.
func NewMetricsScraper(url string, client *http.Client, model, version string) *MetricsScraper {
	if client == nil {
		client = http.DefaultClient
	}
	return &MetricsScraper{url: url, client: client, model: model, version: version}
}

// AlsoPending makes the pending requests of another model count in
// ServerMetrics.Pending: a run over several models reads each server's
// metrics once, and its pending requests are those of all its models.
// Call it before the first Scrape.
func (m *MetricsScraper) AlsoPending(model, version string) {
	m.more = append(m.more, [2]string{model, version})
}

// Scrape reads the endpoint. An unreachable or unreadable endpoint gives
// Available=false with the reason in Err.
func (m *MetricsScraper) Scrape(ctx context.Context) ServerMetrics {
	tm, err := triton.ScrapeMetrics(ctx, m.client, m.url)
	if err != nil {
		return ServerMetrics{Err: oneLine(err)}
	}
	s := MetricsFrom(tm, m.model, m.version)
	for _, mv := range m.more {
		if n, ok := pendingOf(tm, mv[0], mv[1]); ok {
			s.HasPending = true
			s.Pending += n
		}
	}
	return s
}

// MetricsFrom selects what a Snapshot shows from a parsed metrics reading.
// Families the server did not expose stay absent: no GPU entry for a GPU
// with no gauge, a GPU's Has* flag false for a gauge it lacks (a GPU that
// reports only some gauges is kept), HasCPU and HasPending false.
func MetricsFrom(tm *triton.Metrics, model, version string) ServerMetrics {
	s := ServerMetrics{Available: true}
	for _, g := range tm.GPUs {
		if !g.HasUtilization && !g.HasMemory && !g.HasPower {
			continue
		}
		s.GPUs = append(s.GPUs, GPU{
			UUID:           g.UUID,
			Utilization:    g.Utilization,
			MemoryUsed:     g.MemoryUsed,
			MemoryTotal:    g.MemoryTotal,
			PowerW:         g.PowerUsage,
			PowerLimitW:    g.PowerLimit,
			HasUtilization: g.HasUtilization,
			HasMemory:      g.HasMemory,
			HasPower:       g.HasPower,
		})
	}
	if tm.HasCPU {
		s.HasCPU = true
		s.CPUUtilization = tm.CPUUtilization
		s.CPUMemoryUsed = tm.CPUMemoryUsed
		s.CPUMemoryTotal = tm.CPUMemoryTotal
	}
	s.Pending, s.HasPending = pendingOf(tm, model, version)
	return s
}

// pendingOf is a model's pending requests, summed over its versions when
// version is empty, and whether the server reported them.
func pendingOf(tm *triton.Metrics, model, version string) (float64, bool) {
	var n float64
	has := false
	for k, mm := range tm.Models {
		if k.Model != model || (version != "" && k.Version != version) || !mm.HasPending {
			continue
		}
		has = true
		n += mm.PendingRequests
	}
	return n, has
}
