package session_test

import (
	"math"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/sim"
)

// refusalWorkerCases are a worker of a distributed run, and the sequences
// of a stateful model, refused before any connection but one: the
// Prometheus address taken by the simulator's metrics.
func refusalWorkerCases(srv *sim.Server) []refusalCase {
	workers := func(n, conc int) func(*session.Config) {
		return func(c *session.Config) { c.Workers.Count, c.Concurrency = n, conc }
	}
	workersRange := func(n int, r string, step time.Duration) func(*session.Config) {
		return func(c *session.Config) { c.Workers.Count, c.ConcurrencyRange, c.StepDuration = n, r, step }
	}
	seq := func(f func(s *session.SequenceConfig)) func(*session.Config) {
		return func(c *session.Config) { f(&c.Sequences) }
	}
	return []refusalCase{
		{"workers 0", []string{"workers"}, workers(0, 0), 2, []string{"--workers 0", "1 to 10000"}},
		{"workers negative", nil, workers(-2, 0), 2, []string{"--workers -2"}},
		{"worker index past the workers", nil, func(c *session.Config) { workers(3, 6)(c); c.Workers.Index = 3 }, 2,
			[]string{"--worker-index 3", "0 to 2"}},
		{"worker index negative", nil, func(c *session.Config) { workers(3, 6)(c); c.Workers.Index = -1 }, 2, []string{"--worker-index -1"}},
		{"worker index without workers", nil, func(c *session.Config) { c.Workers.Index = 1 }, 2, []string{"--worker-index needs --workers"}},
		{"workers without a load", nil, workers(2, 0), 2, []string{"--workers", "whole load"}},
		{"workers range without step duration", nil, workersRange(2, "2:8:2", 0), 2, []string{"--step-duration", "same tick"}},
		{"workers binary search", nil, func(c *session.Config) {
			workersRange(2, "2:8:2", 2*time.Second)(c)
			c.LatencyThreshold, c.BinarySearch = 10, true
		}, 2, []string{"--binary-search"}},
		{"workers latency threshold", nil, func(c *session.Config) {
			workersRange(2, "2:8:2", 2*time.Second)(c)
			c.LatencyThreshold = 10
		}, 2, []string{"--latency-threshold", "own share"}},
		{"concurrency below the workers", nil, workers(4, 3), 2, []string{"concurrency 3 over --workers 4", "4 or more"}},
		{"range below the workers", nil, workersRange(4, "2:8:2", 2*time.Second), 2, []string{"concurrency 2 over --workers 4"}},
		{"concurrency past the workers' limit", nil, workers(2, 40000), 2, []string{"--concurrency 40000", "1 to 32768"}},
		{"range past a worker's limit", nil, workersRange(2, "2:40000:39998", 2*time.Second), 2, []string{"20000 per worker", "16384"}},
		{"start-at not a time", nil, func(c *session.Config) { c.Workers.StartAt = "REPLACE-WITH-AN-RFC3339-TIME" }, 2, []string{"--start-at", "RFC 3339"}},
		{"prometheus address without a port", nil, func(c *session.Config) { c.Workers.PrometheusAddr = "9099" }, 2,
			[]string{"--prometheus-addr \"9099\"", "HOST:PORT"}},
		{"prometheus port in use", nil, func(c *session.Config) { c.Workers.PrometheusAddr = srv.MetricsAddr() }, 2,
			[]string{"--prometheus-addr", "address already in use"}},
		{"scrape interval negative", nil, func(c *session.Config) { c.Workers.ScrapeInterval = -time.Second }, 2,
			[]string{"--prometheus-scrape-interval -1s"}},
		{"sequence length 0", []string{"sequence-length"}, seq(func(s *session.SequenceConfig) { s.Length = 0 }), 2,
			[]string{"--sequence-length 0", "1 to 1000000"}},
		{"sequence length huge", nil, seq(func(s *session.SequenceConfig) { s.Length = 2000000 }), 2, []string{"--sequence-length 2e+06"}},
		{"sequence variation negative", nil, seq(func(s *session.SequenceConfig) { s.Variation = -5 }), 2,
			[]string{"--sequence-length-variation -5", "0 to 100"}},
		{"sequence variation NaN", nil, seq(func(s *session.SequenceConfig) { s.Variation = math.NaN() }), 2, []string{"--sequence-length-variation NaN"}},
		{"num of sequences 0", []string{"num-of-sequences"}, seq(func(s *session.SequenceConfig) { s.Count = 0 }), 2, []string{"--num-of-sequences 0"}},
		{"sequence id 0", nil, seq(func(s *session.SequenceConfig) { s.IDRange = "0:10" }), 2, []string{"--sequence-id-range", "start at 1"}},
		{"sequence ids backwards", nil, seq(func(s *session.SequenceConfig) { s.IDRange = "10:5" }), 2,
			[]string{"--sequence-id-range", "END must be above START"}},
		{"sequence ids not numbers", nil, seq(func(s *session.SequenceConfig) { s.IDRange = "a:b" }), 2,
			[]string{"--sequence-id-range", "\"a\" is not a whole number"}},
		{"sequence ids three parts", nil, seq(func(s *session.SequenceConfig) { s.IDRange = "1:2:3" }), 2,
			[]string{"--sequence-id-range", "START[:END]"}},
		{"sequence ids past int64", nil, seq(func(s *session.SequenceConfig) { s.IDRange = "9223372036854775808" }), 2,
			[]string{"--sequence-id-range", "int64"}},
		{"fewer sequence ids than concurrency", nil, func(c *session.Config) { c.Concurrency, c.Sequences.IDRange = 8, "1:5" }, 2,
			[]string{"--sequence-id-range", "4 ids", "concurrency 8"}},
		{"fewer sequence ids than a range reaches", nil, func(c *session.Config) { c.ConcurrencyRange, c.Sequences.IDRange = "2:16:2", "1:9" }, 2,
			[]string{"8 ids", "concurrency 16"}},
		{"fewer sequence ids than sequences", nil, func(c *session.Config) {
			c.RequestRate, c.Sequences.Count, c.Sequences.IDRange = 10, 6, "1:3"
		}, 2, []string{"2 ids", "--num-of-sequences 6"}},
	}
}

// refusalAtTheServerCases are refused once the server says what the
// model is, or fail the run (1) when the server cannot be reached.
func refusalAtTheServerCases(t *testing.T, dir, grpcURL, httpURL string) []refusalCase {
	missingInput := writeFile(t, dir, "missing.json", `{"data":[{"INPUT0":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`)
	shortInput := writeFile(t, dir, "short.json", `{"data":[{"INPUT0":[1,2,3],"INPUT1":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`)
	existing := writeFile(t, dir, "existing.jsonl", "{}\n")
	unknownInFile := writeFile(t, dir, "unknown.yaml", "models:\n  - model: simple\n  - model: nosuch\n")
	onHTTP := func(c *session.Config) { c.Protocol, c.URL = "http", httpURL }
	return []refusalCase{
		{"replica unreachable", nil, func(c *session.Config) {
			c.URLs = []string{grpcURL, "127.0.0.1:1"}
			c.MetricsURLs = []string{"http://127.0.0.1:2/metrics", "http://127.0.0.1:3/metrics"}
			c.ConnectTimeout = 2 * time.Second
		}, 1, []string{"replica 127.0.0.1:1", "cannot reach", "connection refused"}},
		{"unknown model lists models", nil, func(c *session.Config) { c.Model = "nosuch" }, 2, []string{"nosuch", "resnet50", "simple", "identity"}},
		{"unknown model over HTTP", nil, func(c *session.Config) { onHTTP(c); c.Model = "nosuch" }, 2, []string{"nosuch", "resnet50"}},
		{"missing version lists versions", nil, func(c *session.Config) { c.ModelVersion = "99" }, 2, []string{"version \"99\"", "version 1"}},
		{"bad shape says expected dims", nil, func(c *session.Config) { c.Model, c.Shapes = "bert", []string{"input_ids:a,b"} }, 2, []string{"input_ids"}},
		{"variable dims need --shape", nil, func(c *session.Config) { c.Model = "bert" }, 2, []string{"--shape"}},
		{"huge shape", nil, func(c *session.Config) {
			c.Model, c.Shapes = "bert", []string{"input_ids:99999999999", "attention_mask:1"}
		}, 2, []string{"input_ids", "smaller --shape"}},
		{"unknown model among several", nil, func(c *session.Config) { refusalModels(c, "simple", "nosuch") }, 2,
			[]string{"unknown model \"nosuch\"", "resnet50", "simple"}},
		{"unknown model in a load file", nil, func(c *session.Config) { refusalModels(c); c.LoadFile = unknownInFile }, 2,
			[]string{"unknown model \"nosuch\""}},
		{"shape of no model's input", nil, func(c *session.Config) { refusalModels(c, "simple", "resnet50"); c.Shapes = []string{"tokens:4"} }, 2,
			[]string{"--shape names input 'tokens'", "none of the models (simple,resnet50)"}},
		{"sequence flags on models without sequence batching", []string{"sequence-length"}, func(c *session.Config) {
			refusalModels(c, "simple", "resnet50")
			c.Sequences.Length = 5
		}, 2, []string{"--sequence-length", "none of the models (simple,resnet50) has sequence batching"}},
		{"decoupled model among several without streaming", nil, func(c *session.Config) { refusalModels(c, "simple", "llm") }, 2,
			[]string{"model \"llm\" is decoupled", "--streaming"}},
		{"sequence flags on a model without sequence batching", []string{"sequence-length"}, func(c *session.Config) { c.Sequences.Length = 5 }, 2,
			[]string{"--sequence-length", "\"simple\"", "no sequence batching"}},
		{"serial sequences on a model without sequence batching", nil, func(c *session.Config) {
			onHTTP(c)
			c.RequestRate, c.Sequences.Serial = 5, true
		}, 2, []string{"--serial-sequences", "\"simple\""}},
		{"batch above max_batch_size", nil, func(c *session.Config) { c.BatchSize = 16 }, 2, []string{"16", "max_batch_size 8"}},
		{"input JSON missing an input", nil, func(c *session.Config) { c.InputData = missingInput }, 2, []string{"INPUT1"}},
		{"input JSON wrong element count", nil, func(c *session.Config) { c.InputData = shortInput }, 2, []string{"INPUT0", "16"}},
		{"record onto a run", nil, func(c *session.Config) { c.Record = existing }, 2, []string{"--record", "already exists"}},
		{"gRPC to the HTTP port", nil, func(c *session.Config) { c.URL = httpURL }, 1, []string{"looks like an HTTP server", "check -i and the port"}},
		{"HTTP to the gRPC port", nil, func(c *session.Config) { c.Protocol = "http" }, 1, []string{"looks like a gRPC server", "check -i and the port"}},
		{"unreachable URL", nil, func(c *session.Config) { c.URL, c.Duration, c.ConnectTimeout = "127.0.0.1:1", 0, time.Second }, 1,
			[]string{"127.0.0.1:1"}},
	}
}

// refusalPlanCases are tritontop plan's settings (with --demo unless the
// case is about the model), refused before the demo's simulator starts.
func refusalPlanCases() []refusalCase {
	planned := func(f func(pc *session.PlanConfig)) func(*session.Config) {
		return func(c *session.Config) { f(refusalPlan(c, true, "p99:100ms")) }
	}
	return []refusalCase{
		{"several models planned", nil, func(c *session.Config) { refusalPlan(c, false, "p99:100ms"); refusalModels(c, "a", "b") }, 2,
			[]string{"tritontop plan", "-m once"}},
		{"plan without SLO", nil, func(c *session.Config) { refusalPlan(c, true) }, 2, []string{"--slo"}},
		{"plan bad SLO", nil, func(c *session.Config) { refusalPlan(c, true, "fast") }, 2, []string{"--slo", "fast"}},
		{"plan target 0", nil, planned(func(pc *session.PlanConfig) { pc.TargetRate = 0 }), 2, []string{"--target-rate"}},
		{"plan GPU target 2", nil, planned(func(pc *session.PlanConfig) { pc.GPUUtilizationTarget = 2 }), 2, []string{"--gpu-utilization-target"}},
		{"plan with a load", nil, func(c *session.Config) { refusalPlan(c, true, "p99:100ms"); c.Concurrency = 4 }, 2, []string{"chooses the load itself"}},
		{"plan without a model", nil, func(c *session.Config) { refusalPlan(c, false, "p99:100ms"); c.Model = "" }, 2, []string{"-m MODEL"}},
		{"plan repeat 0", nil, planned(func(pc *session.PlanConfig) { pc.Budget.Repeat = 0 }), 2, []string{"--repeat 0"}},
		{"plan trough over the target", nil, planned(func(pc *session.PlanConfig) { pc.Budget.MinRate = 200 }), 2,
			[]string{"--min-rate 200", "--target-rate 100"}},
		{"plan unknown autoscaler", nil, planned(func(pc *session.PlanConfig) { pc.Budget.Autoscaler = "vpa" }), 2, []string{"--autoscaler", "hpa or keda"}},
		{"plan negative cost", nil, planned(func(pc *session.PlanConfig) { pc.Budget.GPUHourCost = -1 }), 2, []string{"--gpu-hour-cost"}},
	}
}
