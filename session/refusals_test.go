package session_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/session"
)

// refusalCase is one bad setting of a run: set changes a plain run of the
// simulator's simple model; given, when not nil, names the flags the
// command line would have marked given (needed for a setting given as 0,
// which a program's Config otherwise takes as its default).
type refusalCase struct {
	name  string
	given []string
	set   func(c *session.Config)
	code  int      // 2: usage.Error, 1: a failed run
	want  []string // all must appear in the error's line
}

// refusalModels sets the command line's -m values in place of the model.
func refusalModels(c *session.Config, args ...string) {
	c.Model, c.ModelArgs = "", args
}

// refusalPlan makes c tritontop plan's run with its defaults, an SLO and a
// target rate; demo plans against the simulator in this process.
func refusalPlan(c *session.Config, demo bool, slos ...string) *session.PlanConfig {
	pc := session.DefaultPlan()
	pc.TargetRate = 100
	c.Plan, c.SLO.Specs = &pc, slos
	if demo {
		c.Demo, c.URL, c.Model = &session.DemoConfig{}, "", ""
	}
	return &pc
}

// TestConfigRefusals: each setting that is out of range, unreadable or at
// odds with another is refused with one line that says what was wrong and
// what to do, a usage error (exit code 2); what only the server shows is
// refused once it says so (2), or fails the run (1): the server or a
// replica unreachable, the wrong protocol for the port. Nothing runs, and
// nothing is left half done.
func TestConfigRefusals(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	grpcURL, httpURL := srv.GRPCAddr(), srv.HTTPAddr()
	dir := t.TempDir()
	var cases []refusalCase
	for _, part := range [][]refusalCase{
		refusalLoadCases(dir), refusalModelCases(t, dir), refusalServerCases(dir, grpcURL), refusalWorkerCases(srv),
		refusalAtTheServerCases(t, dir, grpcURL, httpURL), refusalPlanCases(),
	} {
		cases = append(cases, part...)
	}
	if len(cases) < 60 {
		t.Fatalf("%d cases; the table keeps at least 60", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := session.Defaults()
			c.URL, c.Model = grpcURL, "simple"
			c.Tick, c.Duration, c.Headless = quickTick, time.Second, true
			if tc.given != nil {
				c.Given = map[string]bool{}
				for _, g := range tc.given {
					c.Given[g] = true
				}
			}
			tc.set(&c)
			// A case that is not refused runs for its second (or until the
			// minute of runConfig) and fails the exit code.
			err, stdout, stderr := runConfig(t, c)
			if code := exitCode(err); code != tc.code {
				t.Fatalf("exit code %d (%v), want %d", code, err, tc.code)
			}
			if tc.code == 2 {
				wantRefused(t, err, tc.want...)
			} else {
				refusalOneLine(t, err, tc.want...)
			}
			// The error is all there is to say: the command line prints
			// it, as its one line.
			if stdout != "" || stderr != "" {
				t.Errorf("output besides the error: stdout %q, stderr %q", stdout, stderr)
			}
		})
	}
	t.Cleanup(func() {
		// Nothing was left half done: no CSV's directory from the refused
		// runs.
		if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
			t.Error("a refused run made a directory")
		}
	})
}

// refusalOneLine checks that err is one line holding every one of want.
func refusalOneLine(t *testing.T, err error, want ...string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error of more than one line: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
}

// refusalLoadCases are the load's settings and the measurement's,
// refused before any connection.
func refusalLoadCases(dir string) []refusalCase {
	conc := func(n int) func(*session.Config) { return func(c *session.Config) { c.Concurrency = n } }
	rate := func(r float64) func(*session.Config) { return func(c *session.Config) { c.RequestRate = r } }
	crange := func(r string) func(*session.Config) { return func(c *session.Config) { c.ConcurrencyRange = r } }
	rrange := func(r string) func(*session.Config) { return func(c *session.Config) { c.RequestRateRange = r } }
	return []refusalCase{
		{"no model", nil, func(c *session.Config) { c.Model = "" }, 2, []string{"-m MODEL"}},
		{"unknown protocol", nil, func(c *session.Config) { c.Protocol = "udp" }, 2, []string{"grpc or http"}},
		{"streaming over HTTP", nil, func(c *session.Config) { c.Protocol, c.Streaming = "http", true }, 2, []string{"--streaming", "gRPC"}},
		{"bad distribution", nil, func(c *session.Config) { c.RequestRate, c.Distribution = 5, "gamma" }, 2, []string{"constant or poisson"}},
		{"batch 0", []string{"b"}, func(c *session.Config) { c.BatchSize = 0 }, 2, []string{"-b 0", "1 to 65535"}},
		{"batch negative", nil, func(c *session.Config) { c.BatchSize = -3 }, 2, []string{"-b -3"}},
		{"batch huge", nil, func(c *session.Config) { c.BatchSize = 70000 }, 2, []string{"-b 70000"}},
		{"concurrency 0", []string{"concurrency"}, conc(0), 2, []string{"--concurrency 0", "1 to 16384"}},
		{"concurrency negative", nil, conc(-5), 2, []string{"--concurrency -5"}},
		{"concurrency a million", nil, conc(1000000), 2, []string{"--concurrency", "16384"}},
		{"rate 0", []string{"request-rate"}, rate(0), 2, []string{"--request-rate 0"}},
		{"rate NaN", nil, rate(math.NaN()), 2, []string{"--request-rate NaN", "not a number"}},
		{"rate Inf", nil, rate(math.Inf(1)), 2, []string{"--request-rate", "finite"}},
		{"rate negative", nil, rate(-1), 2, []string{"--request-rate -1"}},
		{"rate too high", nil, rate(2e6), 2, []string{"--request-rate 2e+06"}},
		{"rate and concurrency", nil, func(c *session.Config) { c.Concurrency, c.RequestRate = 2, 5 }, 2, []string{"not both"}},
		{"concurrency twice", nil, func(c *session.Config) { c.Concurrency, c.ConcurrencyRange = 2, "1:4" }, 2, []string{"--concurrency-range", "give one"}},
		{"rate twice", nil, func(c *session.Config) { c.RequestRate, c.RequestRateRange = 5, "1:4" }, 2, []string{"--request-rate-range", "give one"}},
		{"range backwards", nil, crange("4:2"), 2, []string{"END is below START"}},
		{"range NaN", nil, crange("NaN"), 2, []string{"NaN", "positive number"}},
		{"range Inf", nil, crange("Inf"), 2, []string{"Inf", "positive number"}},
		{"range 1e16", nil, crange("1e16"), 2, []string{"16384"}},
		{"range four parts", nil, crange("1:2:3:4"), 2, []string{"START[:END[:STEP]]"}},
		{"range of fractions", nil, crange("0.2:0.4:0.1"), 2, []string{"0.2 is not a whole number"}},
		{"range past the limit", nil, crange("1:100000:1000"), 2, []string{"16384"}},
		{"rate range NaN", nil, rrange("NaN"), 2, []string{"NaN"}},
		{"rate range end NaN", nil, rrange("10:NaN"), 2, []string{"NaN"}},
		{"rate range Inf", nil, rrange("Inf"), 2, []string{"Inf"}},
		{"rate range too many levels", nil, rrange("1:1e9:1"), 2, []string{"more than 1000"}},
		{"step duration 0", []string{"concurrency-range", "step-duration"}, func(c *session.Config) { c.ConcurrencyRange, c.StepDuration = "1:2", 0 }, 2,
			[]string{"--step-duration 0s"}},
		{"step duration negative", nil, func(c *session.Config) { c.ConcurrencyRange, c.StepDuration = "1:2", -time.Second }, 2,
			[]string{"--step-duration -1s"}},
		{"step duration without range", nil, func(c *session.Config) { c.StepDuration = 5 * time.Second }, 2, []string{"--step-duration", "range"}},
		{"duration negative", nil, func(c *session.Config) { c.Duration = -time.Second }, 2, []string{"--duration -1s"}},
		{"duration huge", nil, func(c *session.Config) { c.Duration = 1000000 * time.Hour }, 2, []string{"--duration"}},
		{"tick too short", nil, func(c *session.Config) { c.Tick = time.Millisecond }, 2, []string{"--tick 1ms"}},
		{"interval too short", nil, func(c *session.Config) { c.MeasurementIntervalMS = 5 }, 2, []string{"--measurement-interval 5"}},
		{"window 0", []string{"window"}, func(c *session.Config) { c.Window = 0 }, 2, []string{"--window 0s"}},
		{"drain negative", nil, func(c *session.Config) { c.Drain = -time.Second }, 2, []string{"--drain -1s"}},
		{"connect timeout 0", []string{"connect-timeout"}, func(c *session.Config) { c.ConnectTimeout = 0 }, 2, []string{"--connect-timeout 0s"}},
		{"timeout negative", nil, func(c *session.Config) { c.Timeout = -time.Second }, 2, []string{"--timeout -1s"}},
		{"fps 0", []string{"fps"}, func(c *session.Config) { c.FPS = 0 }, 2, []string{"--fps 0"}},
		{"fps 1000", nil, func(c *session.Config) { c.FPS = 1000 }, 2, []string{"--fps 1000"}},
		{"streams without streaming", nil, func(c *session.Config) { c.Streams = 4 }, 2, []string{"--streams", "--streaming"}},
		{"streams 0", []string{"streaming", "streams"}, func(c *session.Config) { c.Streaming, c.Streams = true, 0 }, 2, []string{"--streams 0"}},
		{"connections 0", []string{"connections"}, func(c *session.Config) { c.Connections = 0 }, 2, []string{"--connections 0"}},
		{"connections huge", nil, func(c *session.Config) { c.Connections = 100000 }, 2, []string{"--connections 100000"}},
		{"retries 300", nil, func(c *session.Config) { c.Retries = 300 }, 2, []string{"--retries 300"}},
		{"max in flight negative", nil, func(c *session.Config) { c.MaxInflight = -1 }, 2, []string{"--max-inflight -1"}},
		{"max trials 0", []string{"max-trials"}, func(c *session.Config) { c.MaxTrials = 0 }, 2, []string{"--max-trials 0"}},
		{"stability 0", []string{"stability-percentage"}, func(c *session.Config) { c.StabilityPercent = 0 }, 2, []string{"--stability-percentage 0"}},
		{"percentile 100", nil, func(c *session.Config) { c.Percentile = 100 }, 2, []string{"--percentile 100"}},
		{"threshold negative", nil, func(c *session.Config) { c.LatencyThreshold = -5 }, 2, []string{"--latency-threshold -5"}},
		{"binary search alone", nil, func(c *session.Config) { c.ConcurrencyRange, c.BinarySearch = "1:8", true }, 2, []string{"--latency-threshold"}},
		{"json and markdown", nil, func(c *session.Config) { c.JSON, c.Markdown = true, true }, 2, []string{"choose one"}},
		{"CSV into a missing directory", nil, func(c *session.Config) { c.CSV = filepath.Join(dir, "no", "x.csv") }, 2, []string{"-f", "no directory"}},
		{"CSV onto a directory", nil, func(c *session.Config) { c.CSV = dir }, 2, []string{"-f", "directory"}},
		{"demo concurrency 0", []string{"concurrency"}, func(c *session.Config) { c.Demo, c.URL, c.Model, c.Concurrency = &session.DemoConfig{}, "", "", 0 }, 2,
			[]string{"--concurrency 0"}},
	}
}

// refusalModelCases are a run over several models: each once, each with
// a load that reads, within the limits, and only what a run over several
// models can do; and the load file that lists them.
func refusalModelCases(t *testing.T, dir string) []refusalCase {
	file := func(name, content string) string { return writeFile(t, dir, name, content) }
	badYAML := file("bad.yaml", "models:\n  - model: simple\n    concurency: 4\n")
	bothLoads := file("both.yaml", "models:\n  - model: simple\n    concurrency: 4\n    rate: 10\n")
	noModels := file("none.yaml", "models: []\n")
	notYAML := file("broken.json", `{"models": [{"model": "simple",}`)
	rateZero := file("zero.json", `{"models": [{"model": "simple", "rate": 0}, {"model": "resnet50"}]}`)
	streams := file("stream.yaml", "models:\n  - model: llm\n    streaming: true\n  - model: simple\n")
	models := func(args ...string) func(*session.Config) {
		return func(c *session.Config) { refusalModels(c, args...) }
	}
	loadFile := func(path string) func(*session.Config) {
		return func(c *session.Config) { refusalModels(c); c.LoadFile = path }
	}
	return []refusalCase{
		{"model twice", nil, models("a", "a@rate=5"), 2, []string{"model a given twice", "-m a@rate=5"}},
		{"malformed @load", nil, models("a", "b@rate=lots"), 2, []string{"bad -m \"b@rate=lots\"", "\"lots\" is not a number"}},
		{"unknown @ option", nil, models("a", "b@speed=3"), 2, []string{"unknown option \"speed\"", "NAME@rate=R"}},
		{"@ with both loads", nil, models("a@concurrency=2,rate=5"), 2, []string{"both a concurrency and a rate"}},
		{"@ with nothing after", nil, models("a@"), 2, []string{"nothing after @"}},
		{"poisson without a rate", nil, models("a@poisson"), 2, []string{"poisson", "add rate=R"}},
		{"@concurrency 0", nil, models("a", "b@concurrency=0"), 2, []string{"-m b@concurrency=0: concurrency 0 is out of range", "1 to 16384"}},
		{"@rate NaN", nil, models("a", "b@rate=NaN"), 2, []string{"-m b@rate=NaN: rate NaN is not a number"}},
		{"@rate too high", nil, models("a", "b@rate=2e6"), 2, []string{"-m b@rate=2e6: rate 2e+06 is out of range"}},
		{"models' concurrency past one process", nil, models("a@concurrency=10000", "b@concurrency=10000"), 2,
			[]string{"the models' concurrency together 20000", "at most 16384"}},
		{"several models with a range", nil, func(c *session.Config) { refusalModels(c, "a", "b"); c.ConcurrencyRange = "1:4" }, 2,
			[]string{"--concurrency-range", "one model at a time"}},
		{"@load with a range", nil, func(c *session.Config) { refusalModels(c, "a@concurrency=4"); c.RequestRateRange = "1:4" }, 2,
			[]string{"drop the @load", "-m a@concurrency=4"}},
		{"several models with workers", nil, func(c *session.Config) {
			refusalModels(c, "a", "b")
			c.Workers.Count, c.Concurrency = 2, 4
		}, 2, []string{"--workers", "without --workers"}},
		{"load file and -m", nil, func(c *session.Config) { refusalModels(c, "a"); c.LoadFile = badYAML }, 2, []string{"--load-file", "drop -m"}},
		{"load file missing", nil, loadFile(filepath.Join(dir, "nope.yaml")), 2, []string{"--load-file", "nope.yaml"}},
		{"load file unknown field", nil, loadFile(badYAML), 2, []string{"bad.yaml", "line 3", "unknown field \"concurency\"", "concurrency, rate"}},
		{"load file both loads", nil, loadFile(bothLoads), 2, []string{"both.yaml", "model simple", "choose one"}},
		{"load file without models", nil, loadFile(noModels), 2, []string{"none.yaml", "no models"}},
		{"load file not JSON", nil, loadFile(notYAML), 2, []string{"broken.json", "not YAML or JSON"}},
		{"load file rate 0", nil, loadFile(rateZero), 2, []string{"--load-file", "zero.json: model simple: rate 0 is out of range"}},
		{"load file streaming over HTTP", nil, func(c *session.Config) { loadFile(streams)(c); c.Protocol = "http" }, 2,
			[]string{"model llm streams", "drop -i http"}},
	}
}

// refusalServerCases are the servers, replicas and the connection's
// settings: several -u are replicas of the model, each once, each with its
// own metrics endpoint.
func refusalServerCases(dir, grpcURL string) []refusalCase {
	servers := func(urls ...string) func(*session.Config) { return func(c *session.Config) { c.URLs = urls } }
	replicas := func(metrics ...string) func(*session.Config) {
		return func(c *session.Config) { c.URLs, c.MetricsURLs = []string{"a:1", "b:1"}, metrics }
	}
	header := func(h string) func(*session.Config) { return func(c *session.Config) { c.Headers = []string{h} } }
	return []refusalCase{
		{"server twice", nil, servers("h:1", "h:1"), 2, []string{"-u h:1 given twice"}},
		{"server twice written two ways", nil, servers("H:8001", "grpc://h"), 2, []string{"-u h:8001 given twice"}},
		{"replicas on one host, default metrics", nil, servers("h:1", "h:2"), 2, []string{"http://h:8002/metrics", "--metrics-url once per -u"}},
		{"one metrics URL for two replicas", nil, replicas("http://a:8002/metrics"), 2, []string{"--metrics-url given 1 times for 2 servers"}},
		{"one metrics URL for both replicas", nil, replicas("http://a:8002/metrics", "http://a:8002/metrics"), 2,
			[]string{"--metrics-url http://a:8002/metrics given for both"}},
		{"metrics URL twice for one server", nil, func(c *session.Config) {
			c.MetricsURLs = []string{"http://a:8002/metrics", "http://b:8002/metrics"}
		}, 2, []string{"--metrics-url given twice"}},
		{"bad replica", nil, servers("a:1", "b:0"), 2, []string{"-u", "port \"0\""}},
		{"unknown balance", nil, func(c *session.Config) { c.URLs, c.Balance = []string{"a:1", "b:1"}, "random" }, 2, []string{"--balance \"random\"", "least or rr"}},
		{"balance with one server", []string{"balance"}, func(c *session.Config) { c.Balance = "rr" }, 2, []string{"--balance", "once per replica"}},
		{"fewer streams than replicas", nil, func(c *session.Config) {
			c.URLs, c.Streaming, c.Streams = []string{"a:1", "b:1"}, true, 1
		}, 2, []string{"--streams 1", "2 replicas"}},
		{"port 0", nil, servers("host:0"), 2, []string{"-u", "port \"0\""}},
		{"port 99999", nil, servers("host:99999"), 2, []string{"port \"99999\""}},
		{"scheme against -i", nil, func(c *session.Config) { c.URLs, c.Protocol = []string{"http://h:8000"}, "grpc" }, 2,
			[]string{"says http but the protocol is grpc"}},
		{"path in -u", nil, servers("h:8001/v2/models"), 2, []string{"path", "/v2/models"}},
		{"metrics URL", nil, func(c *session.Config) { c.MetricsURLs = []string{"notaurl"} }, 2, []string{"--metrics-url", "http://"}},
		{"header without value", nil, header("novalue"), 2, []string{"KEY:VALUE"}},
		{"header name with a space", nil, header("bad key:v"), 2, []string{"header name"}},
		{"header value with a control character", nil, header("k:a\x01b"), 2, []string{"control characters"}},
		{"reserved gRPC header", nil, header("grpc-timeout:1s"), 2, []string{"grpc-"}},
		{"TLS cert without key", nil, func(c *session.Config) { c.SSLCert = "c.pem" }, 2, []string{"--ssl-cert and --ssl-key"}},
		{"missing TLS CA file", nil, func(c *session.Config) { c.URLs, c.SSLCA = []string{grpcURL}, filepath.Join(dir, "ca.pem") }, 2,
			[]string{"--ssl-ca", "ca.pem"}},
	}
}
