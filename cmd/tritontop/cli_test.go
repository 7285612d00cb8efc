package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
)

// startSim starts the simulator with its demo models on free loopback
// ports, the way every CLI test meets a server.
func startSim(t *testing.T) *sim.Server {
	t.Helper()
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(),
		Engine:     sim.EngineOptions{MetricsInterval: 500 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// runCLI runs tritontop in-process and returns its exit code and output.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestBadInput: each kind of bad input, across the load command and every
// subcommand, gets one clear line (and at most a hint line) with exit code 2
// (usage) or 1 (run failed), never a panic, and nothing is left half done.
func TestBadInput(t *testing.T) {
	srv := startSim(t)
	grpcURL, httpURL := srv.GRPCAddr(), srv.HTTPAddr()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missingInput := write("missing.json", `{"data":[{"INPUT0":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`)
	shortInput := write("short.json", `{"data":[{"INPUT0":[1,2,3],"INPUT1":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`)
	notARun := write("notarun.jsonl", "hello\n")
	existing := write("existing.jsonl", "{}\n")
	loadYAML := func(name, content string) string { return write(name, content) }
	badYAML := loadYAML("bad.yaml", "models:\n  - model: simple\n    concurency: 4\n")
	bothLoads := loadYAML("both.yaml", "models:\n  - model: simple\n    concurrency: 4\n    rate: 10\n")
	noModels := loadYAML("none.yaml", "models: []\n")
	notYAML := loadYAML("broken.json", `{"models": [{"model": "simple",}`)
	rateZero := loadYAML("zero.json", `{"models": [{"model": "simple", "rate": 0}, {"model": "resnet50"}]}`)
	unknownInFile := loadYAML("unknown.yaml", "models:\n  - model: simple\n  - model: nosuch\n")
	m := []string{"-m", "simple"}
	with := func(extra ...string) []string { return append(append([]string{}, m...), extra...) }

	cases := []struct {
		name string
		args []string
		code int
		want []string // all must appear in the error line
	}{
		// The load command's flags, refused before any connection.
		{"no model", []string{"-u", grpcURL}, 2, []string{"-m MODEL"}},
		{"unknown flag", with("--bogus"), 2, []string{"-bogus"}},
		{"unexpected argument", with("extra"), 2, []string{"extra"}},
		{"unknown protocol", with("-i", "udp"), 2, []string{"grpc or http"}},
		{"streaming over HTTP", with("-i", "http", "--streaming"), 2, []string{"--streaming", "gRPC"}},
		{"bad distribution", with("--request-rate", "5", "--request-distribution", "gamma"), 2, []string{"constant or poisson"}},
		{"batch 0", with("-b", "0"), 2, []string{"-b 0", "1 to 65535"}},
		{"batch negative", with("-b", "-3"), 2, []string{"-b -3"}},
		{"batch huge", with("-b", "70000"), 2, []string{"-b 70000"}},
		{"concurrency 0", with("--concurrency", "0"), 2, []string{"--concurrency 0", "1 to 16384"}},
		{"concurrency negative", with("--concurrency", "-5"), 2, []string{"--concurrency -5"}},
		{"concurrency a million", with("--concurrency", "1000000"), 2, []string{"--concurrency", "16384"}},
		{"concurrency NaN", with("--concurrency", "NaN"), 2, []string{"NaN", "-concurrency"}},
		{"rate 0", with("--request-rate", "0"), 2, []string{"--request-rate 0"}},
		{"rate NaN", with("--request-rate", "NaN"), 2, []string{"--request-rate NaN", "not a number"}},
		{"rate Inf", with("--request-rate", "Inf"), 2, []string{"--request-rate", "finite"}},
		{"rate negative", with("--request-rate", "-1"), 2, []string{"--request-rate -1"}},
		{"rate too high", with("--request-rate", "2e6"), 2, []string{"--request-rate 2e+06"}},
		{"rate and concurrency", with("--concurrency", "2", "--request-rate", "5"), 2, []string{"not both"}},
		{"concurrency twice", with("--concurrency", "2", "--concurrency-range", "1:4"), 2, []string{"--concurrency-range", "give one"}},
		{"rate twice", with("--request-rate", "5", "--request-rate-range", "1:4"), 2, []string{"--request-rate-range", "give one"}},
		{"range backwards", with("--concurrency-range", "4:2"), 2, []string{"END is below START"}},
		{"range NaN", with("--concurrency-range", "NaN"), 2, []string{"NaN", "positive number"}},
		{"range Inf", with("--concurrency-range", "Inf"), 2, []string{"Inf", "positive number"}},
		{"range 1e16", with("--concurrency-range", "1e16"), 2, []string{"16384"}},
		{"range four parts", with("--concurrency-range", "1:2:3:4"), 2, []string{"START[:END[:STEP]]"}},
		{"range of fractions", with("--concurrency-range", "0.2:0.4:0.1"), 2, []string{"0.2 is not a whole number"}},
		{"range past the limit", with("--concurrency-range", "1:100000:1000"), 2, []string{"16384"}},
		{"rate range NaN", with("--request-rate-range", "NaN"), 2, []string{"NaN"}},
		{"rate range end NaN", with("--request-rate-range", "10:NaN"), 2, []string{"NaN"}},
		{"rate range Inf", with("--request-rate-range", "Inf"), 2, []string{"Inf"}},
		{"rate range too many levels", with("--request-rate-range", "1:1e9:1"), 2, []string{"more than 1000"}},
		{"step duration 0", with("--concurrency-range", "1:2", "--step-duration", "0s"), 2, []string{"--step-duration 0s"}},
		{"step duration negative", with("--concurrency-range", "1:2", "--step-duration", "-1s"), 2, []string{"--step-duration -1s"}},
		{"step duration without range", with("--step-duration", "5s"), 2, []string{"--step-duration", "range"}},
		{"duration negative", with("--duration", "-1s"), 2, []string{"--duration -1s"}},
		{"duration huge", with("--duration", "1000000h"), 2, []string{"--duration"}},
		{"tick too short", with("--tick", "1ms"), 2, []string{"--tick 1ms"}},
		{"interval too short", with("--measurement-interval", "5"), 2, []string{"--measurement-interval 5"}},
		{"window 0", with("--window", "0s"), 2, []string{"--window 0s"}},
		{"drain negative", with("--drain", "-1s"), 2, []string{"--drain -1s"}},
		{"connect timeout 0", with("--connect-timeout", "0s"), 2, []string{"--connect-timeout 0s"}},
		{"timeout negative", with("--timeout", "-1s"), 2, []string{"--timeout -1s"}},
		{"fps 0", with("--fps", "0"), 2, []string{"--fps 0"}},
		{"fps 1000", with("--fps", "1000"), 2, []string{"--fps 1000"}},
		{"streams without streaming", with("--streams", "4"), 2, []string{"--streams", "--streaming"}},
		{"streams 0", with("--streaming", "--streams", "0"), 2, []string{"--streams 0"}},
		{"connections 0", with("--connections", "0"), 2, []string{"--connections 0"}},
		{"connections huge", with("--connections", "100000"), 2, []string{"--connections 100000"}},
		{"retries 300", with("--retries", "300"), 2, []string{"--retries 300"}},
		{"max in flight negative", with("--max-inflight", "-1"), 2, []string{"--max-inflight -1"}},
		{"max trials 0", with("--max-trials", "0"), 2, []string{"--max-trials 0"}},
		{"stability 0", with("--stability-percentage", "0"), 2, []string{"--stability-percentage 0"}},
		{"percentile 100", with("--percentile", "100"), 2, []string{"--percentile 100"}},
		{"threshold negative", with("--latency-threshold", "-5"), 2, []string{"--latency-threshold -5"}},
		{"binary search alone", with("--concurrency-range", "1:8", "--binary-search"), 2, []string{"--latency-threshold"}},
		// Several models: each once, each with a load that reads, within
		// the limits, and only what a run over several models can do.
		{"model twice", []string{"-m", "a", "-m", "a@rate=5"}, 2, []string{"model a given twice", "-m a@rate=5"}},
		{"malformed @load", []string{"-m", "a", "-m", "b@rate=lots"}, 2, []string{"bad -m \"b@rate=lots\"", "\"lots\" is not a number"}},
		{"unknown @ option", []string{"-m", "a", "-m", "b@speed=3"}, 2, []string{"unknown option \"speed\"", "NAME@rate=R"}},
		{"@ with both loads", []string{"-m", "a@concurrency=2,rate=5"}, 2, []string{"both a concurrency and a rate"}},
		{"@ with nothing after", []string{"-m", "a@"}, 2, []string{"nothing after @"}},
		{"poisson without a rate", []string{"-m", "a@poisson"}, 2, []string{"poisson", "add rate=R"}},
		{"@concurrency 0", []string{"-m", "a", "-m", "b@concurrency=0"}, 2, []string{"-m b@concurrency=0: concurrency 0 is out of range", "1 to 16384"}},
		{"@rate NaN", []string{"-m", "a", "-m", "b@rate=NaN"}, 2, []string{"-m b@rate=NaN: rate NaN is not a number"}},
		{"@rate too high", []string{"-m", "a", "-m", "b@rate=2e6"}, 2, []string{"-m b@rate=2e6: rate 2e+06 is out of range"}},
		{"models' concurrency past one process", []string{"-m", "a@concurrency=10000", "-m", "b@concurrency=10000"}, 2,
			[]string{"the models' concurrency together 20000", "at most 16384"}},
		{"several models with a range", []string{"-m", "a", "-m", "b", "--concurrency-range", "1:4"}, 2,
			[]string{"--concurrency-range", "one model at a time"}},
		{"@load with a range", []string{"-m", "a@concurrency=4", "--request-rate-range", "1:4"}, 2, []string{"drop the @load", "-m a@concurrency=4"}},
		{"several models with workers", []string{"-m", "a", "-m", "b", "--workers", "2", "--concurrency", "4"}, 2,
			[]string{"--workers", "without --workers"}},
		{"several models planned", []string{"plan", "-m", "a", "-m", "b", "--slo", "p99:100ms", "--target-rate", "100"}, 2,
			[]string{"tritontop plan", "-m once"}},
		{"load file and -m", []string{"-m", "a", "--load-file", badYAML}, 2, []string{"--load-file", "drop -m"}},
		{"load file missing", []string{"--load-file", filepath.Join(dir, "nope.yaml")}, 2, []string{"--load-file", "nope.yaml"}},
		{"load file unknown field", []string{"--load-file", badYAML}, 2, []string{"bad.yaml", "line 3", "unknown field \"concurency\"", "concurrency, rate"}},
		{"load file both loads", []string{"--load-file", bothLoads}, 2, []string{"both.yaml", "model simple", "choose one"}},
		{"load file without models", []string{"--load-file", noModels}, 2, []string{"none.yaml", "no models"}},
		{"load file not JSON", []string{"--load-file", notYAML}, 2, []string{"broken.json", "not YAML or JSON"}},
		{"load file rate 0", []string{"--load-file", rateZero}, 2, []string{"--load-file", "zero.json: model simple: rate 0 is out of range"}},
		{"load file streaming over HTTP", []string{"-i", "http", "--load-file", loadYAML("stream.yaml",
			"models:\n  - model: llm\n    streaming: true\n  - model: simple\n")}, 2, []string{"model llm streams", "drop -i http"}},
		// Several -u are replicas of the model: each once, each with its
		// own metrics endpoint.
		{"server twice", with("-u", "h:1", "-u", "h:1"), 2, []string{"-u h:1 given twice"}},
		{"server twice written two ways", with("-u", "H:8001", "-u", "grpc://h"), 2, []string{"-u h:8001 given twice"}},
		{"replicas on one host, default metrics", with("-u", "h:1", "-u", "h:2"), 2, []string{"http://h:8002/metrics", "--metrics-url once per -u"}},
		{"one metrics URL for two replicas", with("-u", "a:1", "-u", "b:1", "--metrics-url", "http://a:8002/metrics"), 2,
			[]string{"--metrics-url given 1 times for 2 servers"}},
		{"one metrics URL for both replicas", with("-u", "a:1", "-u", "b:1", "--metrics-url", "http://a:8002/metrics",
			"--metrics-url", "http://a:8002/metrics"), 2, []string{"--metrics-url http://a:8002/metrics given for both"}},
		{"metrics URL twice for one server", with("--metrics-url", "http://a:8002/metrics", "--metrics-url", "http://b:8002/metrics"), 2,
			[]string{"--metrics-url given twice"}},
		{"bad replica", with("-u", "a:1", "-u", "b:0"), 2, []string{"-u", "port \"0\""}},
		{"unknown balance", with("-u", "a:1", "-u", "b:1", "--balance", "random"), 2, []string{"--balance \"random\"", "least or rr"}},
		{"balance with one server", with("--balance", "rr"), 2, []string{"--balance", "once per replica"}},
		{"fewer streams than replicas", with("-u", "a:1", "-u", "b:1", "--streaming", "--streams", "1"), 2,
			[]string{"--streams 1", "2 replicas"}},
		{"port 0", with("-u", "host:0"), 2, []string{"-u", "port \"0\""}},
		{"port 99999", with("-u", "host:99999"), 2, []string{"port \"99999\""}},
		{"scheme against -i", with("-u", "http://h:8000", "-i", "grpc"), 2, []string{"says http but the protocol is grpc"}},
		{"path in -u", with("-u", "h:8001/v2/models"), 2, []string{"path", "/v2/models"}},
		{"metrics URL", with("--metrics-url", "notaurl"), 2, []string{"--metrics-url", "http://"}},
		{"header without value", with("-H", "novalue"), 2, []string{"KEY:VALUE"}},
		{"header name with a space", with("-H", "bad key:v"), 2, []string{"header name"}},
		{"header value with a control character", with("-H", "k:a\x01b"), 2, []string{"control characters"}},
		{"reserved gRPC header", with("-H", "grpc-timeout:1s"), 2, []string{"grpc-"}},
		{"TLS cert without key", with("--ssl-cert", "c.pem"), 2, []string{"--ssl-cert and --ssl-key"}},
		{"missing TLS CA file", with("-u", grpcURL, "--ssl-ca", filepath.Join(dir, "ca.pem")), 2, []string{"--ssl-ca", "ca.pem"}},
		{"json and markdown", with("--json", "--markdown"), 2, []string{"choose one"}},
		{"CSV into a missing directory", with("-f", filepath.Join(dir, "no", "x.csv")), 2, []string{"-f", "no directory"}},
		{"CSV onto a directory", with("-f", dir), 2, []string{"-f", "directory"}},
		// A worker of a distributed run.
		{"workers 0", with("--workers", "0"), 2, []string{"--workers 0", "1 to 10000"}},
		{"workers negative", with("--workers", "-2"), 2, []string{"--workers -2"}},
		{"worker index past the workers", with("--workers", "3", "--worker-index", "3", "--concurrency", "6"), 2, []string{"--worker-index 3", "0 to 2"}},
		{"worker index negative", with("--workers", "3", "--worker-index", "-1", "--concurrency", "6"), 2, []string{"--worker-index -1"}},
		{"worker index without workers", with("--worker-index", "1"), 2, []string{"--worker-index needs --workers"}},
		{"workers without a load", with("--workers", "2"), 2, []string{"--workers", "whole load"}},
		{"workers range without step duration", with("--workers", "2", "--concurrency-range", "2:8:2"), 2, []string{"--step-duration", "same tick"}},
		{"workers binary search", with("--workers", "2", "--concurrency-range", "2:8:2", "--step-duration", "2s", "--latency-threshold", "10", "--binary-search"), 2, []string{"--binary-search"}},
		{"workers latency threshold", with("--workers", "2", "--concurrency-range", "2:8:2", "--step-duration", "2s", "--latency-threshold", "10"), 2, []string{"--latency-threshold", "own share"}},
		{"concurrency below the workers", with("--workers", "4", "--concurrency", "3"), 2, []string{"concurrency 3 over --workers 4", "4 or more"}},
		{"range below the workers", with("--workers", "4", "--concurrency-range", "2:8:2", "--step-duration", "2s"), 2, []string{"concurrency 2 over --workers 4"}},
		{"concurrency past the workers' limit", with("--workers", "2", "--concurrency", "40000"), 2, []string{"--concurrency 40000", "1 to 32768"}},
		{"range past a worker's limit", with("--workers", "2", "--concurrency-range", "2:40000:39998", "--step-duration", "2s"), 2, []string{"20000 per worker", "16384"}},
		{"start-at not a time", with("--start-at", "REPLACE-WITH-AN-RFC3339-TIME"), 2, []string{"--start-at", "RFC 3339"}},
		{"prometheus address without a port", with("--prometheus-addr", "9099"), 2, []string{"--prometheus-addr \"9099\"", "HOST:PORT"}},
		{"prometheus port in use", []string{"-m", "simple", "-u", grpcURL, "--prometheus-addr", srv.MetricsAddr(), "--duration", "1s"}, 2,
			[]string{"--prometheus-addr", "address already in use"}},
		{"scrape interval negative", with("--prometheus-scrape-interval", "-1s"), 2, []string{"--prometheus-scrape-interval -1s"}},
		{"sequence length 0", with("--sequence-length", "0"), 2, []string{"--sequence-length 0", "1 to 1000000"}},
		{"sequence length huge", with("--sequence-length", "2000000"), 2, []string{"--sequence-length 2e+06"}},
		{"sequence variation negative", with("--sequence-length-variation", "-5"), 2, []string{"--sequence-length-variation -5", "0 to 100"}},
		{"sequence variation NaN", with("--sequence-length-variation", "NaN"), 2, []string{"--sequence-length-variation NaN"}},
		{"num of sequences 0", with("--num-of-sequences", "0"), 2, []string{"--num-of-sequences 0"}},
		{"sequence id 0", with("--sequence-id-range", "0:10"), 2, []string{"--sequence-id-range", "start at 1"}},
		{"sequence ids backwards", with("--sequence-id-range", "10:5"), 2, []string{"--sequence-id-range", "END must be above START"}},
		{"sequence ids not numbers", with("--sequence-id-range", "a:b"), 2, []string{"--sequence-id-range", "\"a\" is not a whole number"}},
		{"sequence ids three parts", with("--sequence-id-range", "1:2:3"), 2, []string{"--sequence-id-range", "START[:END]"}},
		{"sequence ids past int64", with("--sequence-id-range", "9223372036854775808"), 2, []string{"--sequence-id-range", "int64"}},
		{"fewer sequence ids than concurrency", with("--concurrency", "8", "--sequence-id-range", "1:5"), 2,
			[]string{"--sequence-id-range", "4 ids", "concurrency 8"}},
		{"fewer sequence ids than a range reaches", with("--concurrency-range", "2:16:2", "--sequence-id-range", "1:9"), 2,
			[]string{"8 ids", "concurrency 16"}},
		{"fewer sequence ids than sequences", with("--request-rate", "10", "--num-of-sequences", "6", "--sequence-id-range", "1:3"), 2,
			[]string{"2 ids", "--num-of-sequences 6"}},
		{"replica unreachable", []string{"-m", "simple", "-u", grpcURL, "-u", "127.0.0.1:1", "--metrics-url", "http://127.0.0.1:2/metrics",
			"--metrics-url", "http://127.0.0.1:3/metrics", "--duration", "1s", "--connect-timeout", "2s"}, 1,
			[]string{"replica 127.0.0.1:1", "cannot reach", "connection refused"}},
		// Refused once the server says what the model is.
		{"unknown model lists models", []string{"-m", "nosuch", "-u", grpcURL, "--duration", "1s"}, 2,
			[]string{"nosuch", "resnet50", "simple", "identity"}},
		{"unknown model over HTTP", []string{"-m", "nosuch", "-i", "http", "-u", httpURL, "--duration", "1s"}, 2,
			[]string{"nosuch", "resnet50"}},
		{"missing version lists versions", []string{"-m", "simple", "-x", "99", "-u", grpcURL, "--duration", "1s"}, 2,
			[]string{"version \"99\"", "version 1"}},
		{"bad shape says expected dims", []string{"-m", "bert", "-u", grpcURL, "--shape", "input_ids:a,b", "--duration", "1s"}, 2,
			[]string{"input_ids"}},
		{"variable dims need --shape", []string{"-m", "bert", "-u", grpcURL, "--duration", "1s"}, 2, []string{"--shape"}},
		{"huge shape", []string{"-m", "bert", "-u", grpcURL, "--shape", "input_ids:99999999999", "--shape", "attention_mask:1",
			"--duration", "1s"}, 2, []string{"input_ids", "smaller --shape"}},
		{"unknown model among several", []string{"-m", "simple", "-m", "nosuch", "-u", grpcURL, "--duration", "1s"}, 2,
			[]string{"unknown model \"nosuch\"", "resnet50", "simple"}},
		{"unknown model in a load file", []string{"--load-file", unknownInFile, "-u", grpcURL, "--duration", "1s"}, 2,
			[]string{"unknown model \"nosuch\""}},
		{"shape of no model's input", []string{"-m", "simple", "-m", "resnet50", "-u", grpcURL, "--shape", "tokens:4", "--duration", "1s"}, 2,
			[]string{"--shape names input 'tokens'", "none of the models (simple,resnet50)"}},
		{"sequence flags on models without sequence batching", []string{"-m", "simple", "-m", "resnet50", "-u", grpcURL,
			"--sequence-length", "5", "--duration", "1s"}, 2, []string{"--sequence-length", "none of the models (simple,resnet50) has sequence batching"}},
		{"decoupled model among several without streaming", []string{"-m", "simple", "-m", "llm", "-u", grpcURL, "--duration", "1s"}, 2,
			[]string{"model \"llm\" is decoupled", "--streaming"}},
		{"sequence flags on a model without sequence batching", []string{"-m", "simple", "-u", grpcURL, "--sequence-length", "5",
			"--duration", "1s"}, 2, []string{"--sequence-length", "\"simple\"", "no sequence batching"}},
		{"serial sequences on a model without sequence batching", []string{"-m", "simple", "-u", httpURL, "-i", "http",
			"--request-rate", "5", "--serial-sequences", "--duration", "1s"}, 2, []string{"--serial-sequences", "\"simple\""}},
		{"batch above max_batch_size", []string{"-m", "simple", "-u", grpcURL, "-b", "16", "--duration", "1s"}, 2,
			[]string{"16", "max_batch_size 8"}},
		{"input JSON missing an input", []string{"-m", "simple", "-u", grpcURL, "--input-data", missingInput, "--duration", "1s"}, 2,
			[]string{"INPUT1"}},
		{"input JSON wrong element count", []string{"-m", "simple", "-u", grpcURL, "--input-data", shortInput, "--duration", "1s"}, 2,
			[]string{"INPUT0", "16"}},
		{"record onto a run", []string{"-m", "simple", "-u", grpcURL, "--record", existing, "--duration", "1s"}, 2,
			[]string{"--record", "already exists"}},
		{"gRPC to the HTTP port", []string{"-m", "simple", "-u", httpURL, "--duration", "1s"}, 1,
			[]string{"looks like an HTTP server", "check -i and the port"}},
		{"HTTP to the gRPC port", []string{"-m", "simple", "-i", "http", "-u", grpcURL, "--duration", "1s"}, 1,
			[]string{"looks like a gRPC server", "check -i and the port"}},
		{"unreachable URL", []string{"-m", "simple", "-u", "127.0.0.1:1", "--connect-timeout", "1s"}, 1,
			[]string{"127.0.0.1:1"}},
		// The other subcommands.
		{"demo concurrency 0", []string{"demo", "--concurrency", "0"}, 2, []string{"--concurrency 0"}},
		{"sim bad port", []string{"sim", "--grpc-port", "99999"}, 2, []string{"99999"}},
		{"sim spike rate NaN", []string{"sim", "--spike-rate", "NaN"}, 2, []string{"--spike-rate"}},
		{"sim unknown flag", []string{"sim", "--bogus"}, 2, []string{"-bogus"}},
		{"sim unknown repository", []string{"sim", "--model-repository", filepath.Join(dir, "nosuch.json")}, 2, []string{"nosuch.json", "not a built-in set", `"examples"`}},
		{"replay missing file", []string{"replay", filepath.Join(dir, "nope.jsonl")}, 2, []string{"nope.jsonl"}},
		{"replay two files", []string{"replay", notARun, existing}, 2, []string{"one run file"}},
		{"replay negative speed", []string{"replay", existing, "--speed", "-1"}, 2, []string{"--speed"}},
		{"replay not a run file", []string{"replay", notARun}, 2, []string{"notarun.jsonl"}},
		{"report without -o", []string{"report", existing}, 2, []string{"-o"}},
		{"report missing file", []string{"report", filepath.Join(dir, "nope.jsonl"), "-o", filepath.Join(dir, "r.html")}, 2, []string{"nope.jsonl"}},
		{"compare one file", []string{"compare", existing}, 2, []string{"two"}},
		{"compare json and markdown", []string{"compare", existing, existing, "--json", "--markdown"}, 2, []string{"--json", "--markdown"}},
		{"merge one file", []string{"merge", existing, "-o", filepath.Join(dir, "m.jsonl")}, 2, []string{"two workers or more"}},
		{"merge without -o", []string{"merge", existing, existing}, 2, []string{"-o FILE"}},
		{"merge not a run file", []string{"merge", notARun, existing, "-o", filepath.Join(dir, "m.jsonl")}, 2, []string{"notarun.jsonl"}},
		{"merge missing file", []string{"merge", filepath.Join(dir, "nope.jsonl"), existing, "-o", filepath.Join(dir, "m.jsonl")}, 2, []string{"nope.jsonl"}},
		{"plan without SLO", []string{"plan", "--demo", "--target-rate", "100"}, 2, []string{"--slo"}},
		{"plan bad SLO", []string{"plan", "--demo", "--slo", "fast", "--target-rate", "100"}, 2, []string{"--slo", "fast"}},
		{"plan target 0", []string{"plan", "--demo", "--slo", "p99:100ms", "--target-rate", "0"}, 2, []string{"--target-rate"}},
		{"plan GPU target 2", []string{"plan", "--demo", "--slo", "p99:100ms", "--target-rate", "100", "--gpu-utilization-target", "2"}, 2,
			[]string{"--gpu-utilization-target"}},
		{"plan with a load", []string{"plan", "--demo", "--slo", "p99:100ms", "--target-rate", "100", "--concurrency", "4"}, 2,
			[]string{"chooses the load itself"}},
		{"plan without a model", []string{"plan", "--slo", "p99:100ms", "--target-rate", "100"}, 2, []string{"-m MODEL"}},
		{"plan repeat 0", []string{"plan", "--demo", "--slo", "p99:100ms", "--target-rate", "100", "--repeat", "0"}, 2, []string{"--repeat 0"}},
		{"plan trough over the target", []string{"plan", "--demo", "--slo", "p99:100ms", "--target-rate", "100", "--min-rate", "200"}, 2,
			[]string{"--min-rate 200", "--target-rate 100"}},
		{"plan unknown autoscaler", []string{"plan", "--demo", "--slo", "p99:100ms", "--target-rate", "100", "--autoscaler", "vpa"}, 2,
			[]string{"--autoscaler", "hpa or keda"}},
		{"plan negative cost", []string{"plan", "--demo", "--slo", "p99:100ms", "--target-rate", "100", "--gpu-hour-cost", "-1"}, 2,
			[]string{"--gpu-hour-cost"}},
		{"demo GPU rate negative", []string{"demo", "--demo-gpu-rate", "-5"}, 2, []string{"--demo-gpu-rate", "auto or full"}},
	}
	if len(cases) < 60 {
		t.Fatalf("%d cases; the table keeps at least 60", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A case that is not refused would run (or serve) on: it fails
			// rather than holding the suite.
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, stdout, stderr := runCLI(c.args...)
				done <- result{code, stdout, stderr}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("tritontop %s ran on instead of refusing its input", strings.Join(c.args, " "))
			}
			code, stdout, stderr := r.code, r.stdout, r.stderr
			if code != c.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, c.code, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) > 2 || len(lines) == 2 && !strings.HasSuffix(lines[1], " -h for help") {
				t.Errorf("stderr is not one line and a hint:\n%s", stderr)
			}
			first := lines[0]
			if !strings.HasPrefix(first, "tritontop: ") && !strings.HasPrefix(first, "tritontop sim: ") {
				t.Errorf("error line %q does not start with \"tritontop: \"", first)
			}
			for _, w := range c.want {
				if !strings.Contains(first, w) {
					t.Errorf("error line %q does not mention %q", first, w)
				}
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace in output: %s", stderr)
			}
			if stdout != "" && c.code != 0 {
				t.Errorf("stdout not empty on error: %q", stdout)
			}
		})
	}
	// Nothing was left half done: no CSV from the refused runs.
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("a refused run made a directory")
	}
}

// TestHelpListsLoadFlags: `tritontop -h` (what the README points to) lists
// the load flags, with exit code 0.
func TestHelpListsLoadFlags(t *testing.T) {
	code, stdout, _ := runCLI("-h")
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{"tritontop demo", "-concurrency", "-request-rate", "-record", "-max-inflight"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
