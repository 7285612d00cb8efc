package session

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/triton"
)

// Limits of a load run's flags. A value past one is refused before anything
// runs: a load generator is run at 2 a.m. against production, and it must
// never be what falls over. They are documented in the README.
const (
	// maxConcurrency: one process keeps this many requests in flight at
	// most (each is a goroutine and its buffers); past it the client is
	// the bottleneck it measures. Spread more load over several machines.
	maxConcurrency = 16384
	// maxRate is requests per second; maxInflightCap the open loop's cap.
	maxRate        = 1e6
	maxInflightCap = 65536
	maxBatch       = driver.MaxBatchSize
	maxStreams     = 1024
	maxConnections = 4096
	maxRetries     = 255
	maxTrials      = 1000
	maxFPS         = 60
	// Durations: the session's own limits (session.Config.Validate).
	minTick      = MinTick
	maxTick      = MaxTick
	maxWindow    = MaxWindow
	maxDuration  = MaxDuration
	maxDrain     = MaxDrain
	maxTimeout   = MaxTimeout
	maxThreshold = time.Hour
)

// check is one numeric flag against its allowed range. Zero, where allowed,
// means the flag's "off" or "default".
type check struct {
	flag     string
	v        float64
	lo, hi   float64
	zeroOK   bool
	allowed  string // the range in words, for the error
	integral bool
}

// checkNumbers validates every numeric load flag: no NaN, no ±Inf, nothing
// negative or past its limit. Each error is one line naming the flag, the
// value and the range.
func checkNumbers(f *Config) error {
	dur := func(d time.Duration) float64 { return float64(d) }
	n := f.Workers.processes()
	checks := []check{
		// The limits of one process's load, times the processes that share it.
		{flag: "--concurrency", v: float64(f.Concurrency), lo: 1, hi: float64(maxConcurrency * n), zeroOK: !f.Given["concurrency"], allowed: fmt.Sprintf("1 to %d", maxConcurrency*n)},
		{flag: "--request-rate", v: f.RequestRate, lo: minRate, hi: maxRate * float64(n), zeroOK: !f.Given["request-rate"], allowed: fmt.Sprintf("at least %v, at most %v requests per second", minRate, maxRate*float64(n))},
		{flag: "-b", v: float64(f.BatchSize), lo: 1, hi: maxBatch, allowed: fmt.Sprintf("1 to %d", maxBatch)},
		{flag: "--max-inflight", v: float64(f.MaxInflight), lo: 1, hi: maxInflightCap, zeroOK: true, allowed: fmt.Sprintf("0 (no cap) or 1 to %d", maxInflightCap)},
		{flag: "--streams", v: float64(f.Streams), lo: 1, hi: maxStreams, zeroOK: !f.Given["streams"], allowed: fmt.Sprintf("1 to %d", maxStreams)},
		{flag: "--connections", v: float64(f.Connections), lo: 1, hi: maxConnections, allowed: fmt.Sprintf("1 to %d", maxConnections)},
		{flag: "--retries", v: float64(f.Retries), lo: 0, hi: maxRetries, allowed: fmt.Sprintf("0 to %d", maxRetries)},
		{flag: "--measurement-interval", v: float64(f.MeasurementIntervalMS), lo: 10, hi: float64(maxTick / time.Millisecond), allowed: "10 to 3600000 ms"},
		{flag: "--tick", v: dur(f.Tick), lo: dur(minTick), hi: dur(maxTick), allowed: "10ms to 1h"},
		{flag: "--window", v: dur(f.Window), lo: dur(minTick), hi: dur(maxWindow), allowed: "10ms to 24h"},
		{flag: "--duration", v: dur(f.Duration), lo: dur(minTick), hi: dur(maxDuration), zeroOK: true, allowed: "0 (until stopped) or 10ms to 720h"},
		{flag: "--step-duration", v: dur(f.StepDuration), lo: dur(minTick), hi: dur(maxWindow), zeroOK: !f.Given["step-duration"], allowed: "10ms to 24h"},
		{flag: "--drain", v: dur(f.Drain), lo: 0, hi: dur(maxDrain), allowed: "0 to 1h"},
		{flag: "--connect-timeout", v: dur(f.ConnectTimeout), lo: dur(minTick), hi: dur(maxTimeout), allowed: "10ms to 1h"},
		{flag: "--timeout", v: dur(f.Timeout), lo: dur(time.Millisecond), hi: dur(maxTimeout), zeroOK: true, allowed: "0 (none) or 1ms to 1h"},
		{flag: "--fps", v: float64(f.FPS), lo: 1, hi: maxFPS, allowed: "1 to 60"},
		{flag: "--stability-percentage", v: f.StabilityPercent, lo: 1e-9, hi: 100, allowed: "above 0, at most 100"},
		{flag: "--max-trials", v: float64(f.MaxTrials), lo: 1, hi: maxTrials, allowed: fmt.Sprintf("1 to %d", maxTrials)},
		{flag: "--percentile", v: f.Percentile, lo: 1e-9, hi: 99.999, zeroOK: true, allowed: "0 (the average) or above 0 and below 100"},
		{flag: "--latency-threshold", v: f.LatencyThreshold, lo: 1e-3, hi: float64(maxThreshold / time.Millisecond), zeroOK: true, allowed: "0 (none) or above 0, at most 3600000 ms"},
		{flag: "--workers", v: float64(f.Workers.Count), lo: 1, hi: maxWorkers, zeroOK: !f.Given["workers"], allowed: fmt.Sprintf("1 to %d", maxWorkers)},
		{flag: "--worker-index", v: float64(f.Workers.Index), lo: 0, hi: maxWorkers - 1, allowed: fmt.Sprintf("0 to %d", maxWorkers-1)},
		{flag: "--prometheus-scrape-interval", v: dur(f.Workers.ScrapeInterval), lo: 0, hi: dur(maxTimeout), allowed: "0 (stop at once) to 1h"},
		{flag: "--sequence-length", v: float64(f.Sequences.Length), lo: 1, hi: maxSequenceLength, allowed: fmt.Sprintf("1 to %d requests", maxSequenceLength)},
		{flag: "--sequence-length-variation", v: f.Sequences.Variation, lo: 0, hi: 100, allowed: "0 to 100 (percent)"},
		{flag: "--num-of-sequences", v: float64(f.Sequences.Count), lo: 1, hi: maxConcurrency, allowed: fmt.Sprintf("1 to %d", maxConcurrency)},
	}
	// Each model's own load and batch (-m NAME@LOAD, --load-file), before
	// the run's: a bad one is named as the person wrote it. A process
	// keeps at most maxConcurrency requests in flight and maxRate a
	// second in all, whatever the models.
	var conc, rate float64
	for _, m := range f.models {
		c := check{flag: m.where + ": concurrency", v: float64(m.load.Concurrency), lo: 1, hi: maxConcurrency,
			allowed: fmt.Sprintf("1 to %d", maxConcurrency)}
		if m.load.Open() {
			c = check{flag: m.where + ": rate", v: m.load.Rate, lo: minRate, hi: maxRate,
				allowed: fmt.Sprintf("at least %v, at most %v requests per second", minRate, maxRate)}
		}
		if m.hasLoad() {
			checks = append([]check{c}, checks...)
		}
		if m.batch != 0 {
			checks = append(checks, check{flag: m.where + ": batch", v: float64(m.batch), lo: 1, hi: maxBatch, allowed: fmt.Sprintf("1 to %d", maxBatch)})
		}
		switch {
		case m.load.Open():
			rate += m.load.Rate
		case m.hasLoad():
			conc += float64(m.load.Concurrency)
		case f.Given["request-rate"]:
			rate += f.RequestRate
		default:
			conc += float64(max(f.Concurrency, 1))
		}
	}
	if f.several() {
		checks = append(checks,
			check{flag: "the models' concurrency together", v: conc, lo: 0, hi: maxConcurrency, zeroOK: true, allowed: fmt.Sprintf("at most %d in one process", maxConcurrency)},
			check{flag: "the models' rates together", v: rate, lo: 0, hi: maxRate, zeroOK: true, allowed: fmt.Sprintf("at most %v requests per second in one process", maxRate)})
	}
	for _, c := range checks {
		if err := c.verify(); err != nil {
			return err
		}
	}
	return nil
}

func (c check) verify() error {
	switch {
	case math.IsNaN(c.v):
		return fmt.Errorf("%s NaN is not a number: use %s", c.flag, c.allowed)
	case math.IsInf(c.v, 0):
		return fmt.Errorf("%s %v is not a finite number: use %s", c.flag, c.v, c.allowed)
	case c.v == 0 && c.zeroOK:
		return nil
	case c.v < c.lo || c.v > c.hi:
		return fmt.Errorf("%s %s is out of range: use %s", c.flag, c.show(), c.allowed)
	}
	return nil
}

// show prints the value as the user gave it: durations as durations.
func (c check) show() string {
	switch c.flag {
	case "--tick", "--window", "--duration", "--step-duration", "--drain", "--connect-timeout", "--timeout", "--prometheus-scrape-interval":
		return time.Duration(c.v).String()
	}
	return strconv.FormatFloat(c.v, 'g', -1, 64)
}

// checkCombinations refuses flags that contradict each other or would be
// silently dropped.
func checkCombinations(f *Config) error {
	closed := f.Given["concurrency"] || f.ConcurrencyRange != ""
	open := f.Given["request-rate"] || f.RequestRateRange != ""
	switch {
	case closed && open:
		return errors.New("choose closed loop (--concurrency) or open loop (--request-rate), not both")
	case f.Given["concurrency"] && f.ConcurrencyRange != "":
		return errors.New("--concurrency and --concurrency-range both set the concurrency: give one")
	case f.Given["request-rate"] && f.RequestRateRange != "":
		return errors.New("--request-rate and --request-rate-range both set the rate: give one")
	case f.Given["streams"] && !f.Streaming && !slices.ContainsFunc(f.models, func(m modelSpec) bool { return m.streaming != nil && *m.streaming }):
		return errors.New("--streams needs --streaming: add --streaming or drop --streams")
	case f.BinarySearch && f.LatencyThreshold == 0 && f.Plan == nil:
		return errors.New("--binary-search needs --latency-threshold MS: it searches for the highest level under it")
	case f.Given["step-duration"] && f.ConcurrencyRange == "" && f.RequestRateRange == "":
		return errors.New("--step-duration sets the length of a range's steps: add --concurrency-range or --request-rate-range")
	case f.JSON && f.Markdown:
		return errors.New("--json and --markdown both format the summary: choose one")
	}
	if f.Given["step-duration"] && f.StepDuration < f.Tick {
		return fmt.Errorf("--step-duration %v is shorter than a tick (%v): a step lasts at least one tick", f.StepDuration, f.Tick)
	}
	return checkWorkers(f)
}

// checkAddresses validates -u, --metrics-url and the headers before any
// connection: a malformed address is a usage error, not a failed run.
func checkAddresses(f *Config) error {
	for _, s := range f.servers() {
		if err := triton.CheckServerURL(s, f.Protocol); err != nil {
			return fmt.Errorf("-u: %w", err)
		}
	}
	for _, m := range f.MetricsURLs {
		u, err := url.Parse(m)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--metrics-url %s is not an http:// or https:// URL (such as http://triton:8002/metrics)", textsafe.Quote(m))
		}
	}
	if err := checkReplicas(f); err != nil {
		return err
	}
	if err := checkHeaders(f.Headers, f.Protocol); err != nil {
		return err
	}
	return nil
}

// validGRPCKey reports whether k is a gRPC metadata name a client may send.
func validGRPCKey(k string) bool {
	k = strings.ToLower(k)
	if strings.HasPrefix(k, "grpc-") {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// checkOutputs applies the output-file rule (outfiles.go) to every file the
// run writes, before it starts: a run that could not keep its results is
// not started. A run over several models writes a CSV file per model
// (csvPathFor).
func checkOutputs(f *Config) error {
	var outs []outfile.Named
	if f.CSV != "" {
		for _, p := range f.csvPaths() {
			outs = append(outs, outfile.Named{Flag: "-f", Path: p})
		}
		if f.CSV == "-" {
			outs = outs[:0]
			outs = append(outs, outfile.Named{Flag: "-f", Path: "-"})
		}
	}
	outs = append(outs, outfile.Named{Flag: "--record", Path: f.Record}, outfile.Named{Flag: "--cpuprofile", Path: f.CPUProfile})
	return outfile.CheckAll(outs, f.Force)
}

// csvPaths are the CSV files -f writes: the one, or one per model of a run
// over several.
func (f *Config) csvPaths() []string {
	if !f.several() {
		return []string{f.CSV}
	}
	out := make([]string, len(f.models))
	for i, m := range f.models {
		out[i] = csvPathFor(f.CSV, m.name)
	}
	return out
}

// checkRanges reads the ranges as the run will, so that a bad one is a
// usage error before any connection, and holds their levels to the limits
// of --concurrency and --request-rate, and --sequence-id-range to the most
// sequences they may keep live at once.
func checkRanges(f *Config) error {
	sc, err := loadFromFlags(f)
	if err != nil {
		return err
	}
	var levels []load.Target
	switch s := sc.search.(type) {
	case plan.Sweep:
		levels = s.Levels
	case plan.Binary:
		levels = s.Levels
	}
	live := max(f.Concurrency, 1)
	for _, l := range levels {
		switch {
		// With --workers, the levels are this worker's share.
		case !l.Open() && l.Concurrency > maxConcurrency:
			return fmt.Errorf("--concurrency-range %s reaches concurrency %d%s: use at most %d", textsafe.Quote(f.ConcurrencyRange), l.Concurrency, f.Workers.perWorker(), maxConcurrency)
		case l.Open() && l.Rate > maxRate:
			return fmt.Errorf("--request-rate-range %s reaches %v requests per second%s: use at most %v", textsafe.Quote(f.RequestRateRange), l.Rate, f.Workers.perWorker(), maxRate)
		}
		live = max(live, l.Concurrency)
	}
	open := sc.initial.Open() || f.Plan != nil
	if open {
		live = f.Sequences.Count
	}
	return checkSequenceFlags(f, live, open)
}
