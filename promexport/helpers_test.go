package promexport

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tritontop/tritontop/stats"
)

// serve starts e's endpoint on a free loopback port and returns its URL; it
// is closed at the end of the test.
func serve(t *testing.T, e *Exporter) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := e.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return "http://" + srv.Addr().String() + MetricsPath
}

// scrape GETs url as Prometheus would and parses the text exposition.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, fmt.Errorf("GET %s: content type %q, want the text format", url, ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// mustScrape is scrape that fails the test on error.
func mustScrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// labelsOf returns a metric's labels as a map.
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// hasLabels reports whether m's labels include want.
func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := labelsOf(m)
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// only returns the one metric of family name whose labels include want,
// failing the test if there is not exactly one.
func only(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric %s in the scrape", name)
	}
	var found []*dto.Metric
	for _, m := range f.GetMetric() {
		if hasLabels(m, want) {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d series, want 1: %v", name, want, len(found), f.GetMetric())
	}
	return found[0]
}

// counter returns the value of counter name with labels want.
func counter(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	if typ := fams[name].GetType(); typ != dto.MetricType_COUNTER {
		t.Fatalf("%s is a %v, want a counter", name, typ)
	}
	return only(t, fams, name, want).GetCounter().GetValue()
}

// gauge returns the value of gauge name with labels want.
func gauge(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	if typ := fams[name].GetType(); typ != dto.MetricType_GAUGE {
		t.Fatalf("%s is a %v, want a gauge", name, typ)
	}
	return only(t, fams, name, want).GetGauge().GetValue()
}

// histogram returns histogram name with labels want.
func histogram(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Histogram {
	t.Helper()
	if typ := fams[name].GetType(); typ != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s is a %v, want a histogram", name, typ)
	}
	return only(t, fams, name, want).GetHistogram()
}

// cumulative returns a histogram's cumulative count at upper bound ub.
func cumulative(t *testing.T, h *dto.Histogram, ub float64) uint64 {
	t.Helper()
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == ub {
			return b.GetCumulativeCount()
		}
	}
	t.Fatalf("no bucket le=%v in %v", ub, h.GetBucket())
	return 0
}

// sums adds up the tick fields of snaps, as the exporter's counters should.
type sums struct {
	requests, successes, errors, inferences int64
	cancelled, retries, late                int64
	bytesSent, bytesReceived                int64
	byCode                                  map[string]int64
	scheduled                               int64 // successes in open-loop ticks
}

func sumTicks(snaps []stats.Snapshot) sums {
	s := sums{byCode: map[string]int64{}}
	for _, sn := range snaps {
		c := sn.Tick
		s.requests += c.Requests
		s.successes += c.Successes
		s.errors += c.Errors
		s.inferences += c.Inferences
		s.cancelled += c.Cancelled
		s.retries += c.Retries
		s.late += c.Late
		s.bytesSent += c.BytesSent
		s.bytesReceived += c.BytesReceived
		for _, e := range c.ErrorsByCode {
			s.byCode[e.Code] += e.Count
		}
		if c.Scheduled != nil {
			s.scheduled += c.Scheduled.Count
		}
	}
	return s
}

// checkCounters compares every counter of a scrape with the sums.
func checkCounters(t *testing.T, fams map[string]*dto.MetricFamily, s sums, labels map[string]string) {
	t.Helper()
	for _, c := range []struct {
		name string
		want int64
	}{
		{MetricRequests, s.requests},
		{MetricSuccesses, s.successes},
		{MetricInferences, s.inferences},
		{MetricCancelled, s.cancelled},
		{MetricRetries, s.retries},
		{MetricLateSends, s.late},
		{MetricBytesSent, s.bytesSent},
		{MetricBytesReceived, s.bytesReceived},
	} {
		if got := counter(t, fams, c.name, labels); got != float64(c.want) {
			t.Errorf("%s = %v, want %d (the sum over the ticks)", c.name, got, c.want)
		}
	}
	var errs float64
	for code, n := range s.byCode {
		want := map[string]string{"code": code}
		for k, v := range labels {
			want[k] = v
		}
		got := counter(t, fams, MetricErrors, want)
		if got != float64(n) {
			t.Errorf("%s{code=%q} = %v, want %d", MetricErrors, code, got, n)
		}
		errs += got
	}
	n := 0
	for _, m := range fams[MetricErrors].GetMetric() {
		if hasLabels(m, labels) {
			n++
		}
	}
	if n != len(s.byCode) {
		t.Errorf("%d error codes exported, want %d", n, len(s.byCode))
	}
	if errs != float64(s.errors) {
		t.Errorf("errors over all codes = %v, want %d", errs, s.errors)
	}
}
