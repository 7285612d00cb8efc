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

// Scrape reads the endpoint. An unreachable or unreadable endpoint gives
// Available=false with the reason in Err.
func (m *MetricsScraper) Scrape(ctx context.Context) ServerMetrics {
	tm, err := triton.ScrapeMetrics(ctx, m.client, m.url)
	if err != nil {
		return ServerMetrics{Err: oneLine(err)}
	}
	return MetricsFrom(tm, m.model, m.version)
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
	for k, mm := range tm.Models {
		if k.Model != model || (version != "" && k.Version != version) || !mm.HasPending {
			continue
		}
		s.HasPending = true
		s.Pending += mm.PendingRequests
	}
	return s
}
