package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/report"
)

// paFlags are perf_analyzer's flags that tritontop has no flag of its own
// for, so that perf_analyzer's command lines run unchanged: each one does
// what perf_analyzer's does, or is accepted with a note printed on stderr,
// or is refused with one line saying why and what to use instead.
// docs/perf-analyzer.md has the table of every perf_analyzer flag.
type PerfAnalyzerConfig struct {
	// serviceKind is --service-kind; only triton is served.
	ServiceKind string
	// verbose counts -v (perf_analyzer's -v -v is extra verbose).
	Verbose int
	// sync is --sync: one blocking request per worker thread; --async and
	// -a (the default) keep requests in flight over callbacks.
	Sync bool
	// maxThreads is --max-threads (0: not given).
	MaxThreads int
	// measurementMode is time_windows or count_windows;
	// measurementRequestCount the requests of a count window.
	MeasurementMode         string
	MeasurementRequestCount int
	// sharedMemory is none or system; outputSharedMemorySize the bytes of
	// each output's region (--output-shared-memory-size).
	SharedMemory           string
	OutputSharedMemorySize int
	// profileExport is --profile-export-file; export writes it.
	ProfileExportFile string
	export            *report.ProfileExport
	// stringLength is --string-length (0: the default).
	StringLength int
	// notes are the notes printed for flags accepted without an effect.
	notes io.Writer
	// refusal is the reason a perf_analyzer flag or value was refused,
	// which the flag package would otherwise print after its own prefix.
	refusal *error
}

// Defaults of perf_analyzer's flags.
const (
	defaultMeasurementRequestCount = 50
	defaultOutputShmSize           = 100 * 1024
)

// Measurement modes.
const (
	timeWindows  = "time_windows"
	countWindows = "count_windows"
)

// registerPerfAnalyzerFlags adds perf_analyzer's flags to fs. Aliases of
// tritontop's own flags write f's fields; notes go to stderr when the flag
// is parsed.
func registerPerfAnalyzerFlags(fs *flag.FlagSet, f *Config, stderr io.Writer) {
	p := &f.PerfAnalyzer
	p.notes = stderr
	p.refusal = new(error)
	p.ServiceKind = "triton"
	p.MeasurementMode = timeWindows
	p.MeasurementRequestCount = defaultMeasurementRequestCount
	p.SharedMemory = "none"
	p.OutputSharedMemorySize = defaultOutputShmSize

	fs.Var(&choice{seen: p.refusal, to: &p.ServiceKind, flag: "--service-kind", ok: []string{"triton"}, refused: map[string]string{
		"triton_c_api": "tritontop talks to a server over gRPC or HTTP; it does not load Triton's in-process C API",
		"tfserving":    "tritontop speaks Triton's KServe v2 protocol, not TensorFlow Serving's",
		"torchserve":   "tritontop speaks Triton's KServe v2 protocol, not TorchServe's",
		"dynamic_grpc": "tritontop calls Triton's gRPC service, not arbitrary gRPC methods",
		"openai":       "tritontop speaks Triton's KServe v2 protocol, not OpenAI's API; for an LLM on Triton use -m MODEL --streaming",
	}}, "service-kind", "perf_analyzer's --service-kind: only triton (KServe v2 over gRPC or HTTP) is supported")
	fs.Var(counter{&p.Verbose}, "v", "verbose (perf_analyzer's -v): a progress line per tick goes to stderr in headless runs anyway")
	fs.BoolFunc("async", "requests in flight over callbacks (the default; perf_analyzer's --async)", func(string) error { p.Sync = false; return nil })
	fs.BoolFunc("a", "same as --async", func(string) error { p.Sync = false; return nil })
	fs.BoolVar(&p.Sync, "sync", false, "perf_analyzer's synchronous mode: each request in flight has its own OS thread, blocked until its response")
	fs.IntVar(&p.MaxThreads, "max-threads", 0, "with --sync, the most threads, so the most requests in flight (perf_analyzer's default 16); with --async, accepted and unused: requests in flight take no thread each")
	fs.Var(&choice{seen: p.refusal, to: &p.MeasurementMode, flag: "--measurement-mode", ok: []string{timeWindows, countWindows}}, "measurement-mode",
		"time_windows: windows of --measurement-interval ms; count_windows: windows of --measurement-request-count requests")
	fs.IntVar(&p.MeasurementRequestCount, "measurement-request-count", defaultMeasurementRequestCount, "with --measurement-mode count_windows: finished requests per measurement window")
	fs.Var(&choice{seen: p.refusal, to: &p.SharedMemory, flag: "--shared-memory", ok: []string{"none", "system"}, refused: map[string]string{
		"cuda": "tritontop's client has no CUDA: use --shared-memory system (a server on this host) or none",
	}}, "shared-memory", "none (tensors over the network) or system (POSIX shared memory, for a server on this host only: inputs written once, outputs written by the server)")
	fs.IntVar(&p.OutputSharedMemorySize, "output-shared-memory-size", defaultOutputShmSize, "bytes of each output's shared-memory region (only with --shared-memory)")
	fs.StringVar(&p.ProfileExportFile, "profile-export-file", "", "write every request's send and response timestamps to FILE, in perf_analyzer's profile-export JSON (an experiment per load level)")
	fs.StringVar(&f.CSV, "latency-report-file", "", "same as -f (the name Model Analyzer gives perf_analyzer's -f)")
	fs.IntVar(&p.StringLength, "string-length", 0, "length of generated BYTES elements (perf_analyzer's default 128)")

	registerPAAliases(fs, f, p)
	registerPANoted(fs, p, stderr)
	registerPARefused(fs, p)
}

// registerPAAliases registers perf_analyzer's names of tritontop's flags.
func registerPAAliases(fs *flag.FlagSet, f *Config, p *PerfAnalyzerConfig) {
	fs.BoolVar(&f.SSL, "ssl-grpc-use-ssl", false, "same as --ssl")
	fs.StringVar(&f.SSLCA, "ssl-grpc-root-certifications-file", "", "same as --ssl-ca")
	fs.StringVar(&f.SSLKey, "ssl-grpc-private-key-file", "", "same as --ssl-key")
	fs.StringVar(&f.SSLCert, "ssl-grpc-certificate-chain-file", "", "same as --ssl-cert")
	fs.StringVar(&f.SSLCA, "ssl-https-ca-certificates-file", "", "same as --ssl-ca")
	fs.StringVar(&f.SSLCert, "ssl-https-client-certificate-file", "", "same as --ssl-cert")
	fs.StringVar(&f.SSLKey, "ssl-https-private-key-file", "", "same as --ssl-key")
	pem := func(name string) {
		fs.Var(&choice{seen: p.refusal, flag: "--" + name, ok: []string{"PEM"}, refused: map[string]string{"DER": "tritontop reads PEM files: convert with openssl x509 -inform DER (or openssl pkey -inform DER)"}},
			name, "PEM (the only one read)")
	}
	pem("ssl-https-client-certificate-type")
	pem("ssl-https-private-key-type")
	fs.Var(&choice{seen: p.refusal, flag: "--ssl-https-verify-peer", ok: []string{"1"}, refused: map[string]string{"0": "tritontop always verifies the server's certificate: give its CA with --ssl-ca"}},
		"ssl-https-verify-peer", "1 (the server's certificate is always verified)")
	fs.Var(&choice{seen: p.refusal, flag: "--ssl-https-verify-host", ok: []string{"2"}, refused: map[string]string{
		"0": "tritontop always checks that the certificate names the server",
		"1": "tritontop always checks that the certificate names the server"}},
		"ssl-https-verify-host", "2 (the certificate must name the server)")
	fs.Func("data-directory", "same as --input-data DIR (deprecated in perf_analyzer)", func(s string) error { f.InputData = s; return nil })
	fs.BoolFunc("z", "same as --input-data zero", func(string) error { f.InputData = "zero"; return nil })
	fs.Func("t", "same as --concurrency-range N (deprecated in perf_analyzer)", func(s string) error { f.ConcurrencyRange = s; return nil })
}

// registerPANoted registers perf_analyzer's flags that are accepted with a
// note: they change nothing tritontop measures.
func registerPANoted(fs *flag.FlagSet, p *PerfAnalyzerConfig, stderr io.Writer) {
	note := func(name, usage, why string, isBool bool) {
		fs.Var(noted{name: name, why: why, out: stderr, isBool: isBool}, name, usage)
	}
	note("bls-composing-models", "accepted: a BLS model's composing models are not reported apart", "the server's statistics of the composing models are not reported apart; run tritontop -m on each of them", false)
	note("model-signature-name", "accepted: only for TensorFlow Serving", "only used with --service-kind tfserving", false)
	note("triton-server-directory", "accepted: only for --service-kind triton_c_api", "only used with --service-kind triton_c_api", false)
	note("model-repository", "accepted: only for --service-kind triton_c_api", "only used with --service-kind triton_c_api", false)
	note("metrics-interval", "accepted: Triton's metrics are read once per --tick", "Triton's metrics are read once per --tick", false)
	note("log-frequency", "accepted: headless runs print a line per --tick", "headless runs print a progress line per --tick", false)
	note("warmup-request-count", "accepted: each level's windows before the last three stable ones are its warm-up", "each level's windows before the last three stable ones are its warm-up", false)
	fs.Var(&choice{seen: p.refusal, flag: "--input-tensor-format", ok: []string{"binary"}, refused: map[string]string{"json": "tritontop sends HTTP tensors in Triton's binary extension only"}}, "input-tensor-format", "binary (HTTP tensors in Triton's binary extension)")
	fs.Var(&choice{seen: p.refusal, flag: "--output-tensor-format", ok: []string{"binary"}, refused: map[string]string{"json": "tritontop asks for HTTP outputs in Triton's binary extension only"}}, "output-tensor-format", "binary")
	fs.Var(&choice{seen: p.refusal, flag: "--grpc-compression-algorithm", ok: []string{"none"}, refused: map[string]string{
		"gzip": "tritontop sends gRPC requests uncompressed", "deflate": "tritontop sends gRPC requests uncompressed"}},
		"grpc-compression-algorithm", "none (requests are sent uncompressed)")
}

// registerPARefused registers perf_analyzer's flags that are refused: what
// they ask for is not there.
func registerPARefused(fs *flag.FlagSet, p *PerfAnalyzerConfig) {
	for _, r := range []struct {
		name, why string
		isBool    bool
	}{
		{"c", "-c is deprecated in perf_analyzer: use --concurrency-range START:END", false},
		{"d", "-d is deprecated in perf_analyzer: use --concurrency-range START:END", true},
		{"string-data", "--string-data is not supported: put the strings in an --input-data JSON file", false},
		{"request-count", "--request-count is not supported: stop the run with --duration", false},
		{"periodic-concurrency-range", "--periodic-concurrency-range is not supported: use --concurrency-range START:END:STEP", false},
		{"request-period", "--request-period is not supported: it goes with --periodic-concurrency-range", false},
		{"session-concurrency", "--session-concurrency is not supported: it is for --service-kind openai", false},
		{"grpc-method", "--grpc-method is not supported: it is for --service-kind dynamic_grpc", false},
		{"proto", "--proto is not supported: it is for --service-kind dynamic_grpc", false},
		{"trace-level", "--trace-level is not supported: tritontop does not change the server's trace settings: set them on the server (tritonserver --trace-config)", false},
		{"trace-rate", "--trace-rate is not supported: tritontop does not change the server's trace settings: set them on the server (tritonserver --trace-config)", false},
		{"trace-count", "--trace-count is not supported: tritontop does not change the server's trace settings: set them on the server (tritonserver --trace-config)", false},
		{"enable-mpi", "--enable-mpi is not supported: run load from several processes with --workers N", true},
		{"version", "--version is not supported among a run's flags: give it alone (tritontop --version)", true},
		{"?", "-? is not supported: use -h for help", true},
	} {
		fs.Var(refused{seen: p.refusal, why: r.why, isBool: r.isBool}, r.name, "refused: "+r.why)
	}
}

// check validates the combination of perf_analyzer's flags once they are
// all parsed; set is the flags given.
func (p *PerfAnalyzerConfig) check(f *Config) error {
	if p.MaxThreads < 0 || (f.Given["max-threads"] && p.MaxThreads == 0) {
		return fmt.Errorf("--max-threads %d: the value must be > 0", p.MaxThreads)
	}
	if p.MeasurementRequestCount <= 0 {
		return fmt.Errorf("--measurement-request-count %d: the value must be > 0", p.MeasurementRequestCount)
	}
	if f.Given["measurement-request-count"] && p.MeasurementMode != countWindows {
		fmt.Fprintln(p.notes, "note: --measurement-request-count is used only with --measurement-mode count_windows")
	}
	if p.OutputSharedMemorySize < 0 {
		return fmt.Errorf("--output-shared-memory-size %d must not be negative", p.OutputSharedMemorySize)
	}
	if p.Sync && f.Given["max-threads"] {
		most := float64(f.Concurrency)
		if f.ConcurrencyRange != "" {
			if _, end, _, err := parseRange("--concurrency-range", f.ConcurrencyRange); err == nil {
				most = end
			}
		}
		if most > float64(p.MaxThreads) {
			return fmt.Errorf("--sync sends one request per thread: concurrency %v needs --max-threads %v or more (given %d)", most, most, p.MaxThreads)
		}
	}
	if err := p.checkProfileExport(f); err != nil {
		return err
	}
	if err := p.checkSharedMemory(f); err != nil {
		return err
	}
	if p.StringLength < 0 {
		return fmt.Errorf("--string-length %d must not be negative", p.StringLength)
	}
	if f.Given["sync"] && (f.Given["async"] || f.Given["a"]) {
		return fmt.Errorf("--sync and --async both given: pick one")
	}
	return nil
}

// choice is a flag taking one of a few values; refused values get their
// reason, others the list of what is supported.
type choice struct {
	to      *string
	seen    *error // where a refusal is kept (paFlags.refusal)
	flag    string
	ok      []string
	refused map[string]string
	val     string
}

func (c *choice) String() string {
	if c == nil {
		return ""
	}
	if c.to != nil {
		return *c.to
	}
	return c.val
}

func (c *choice) Set(v string) error {
	if why, no := c.refused[v]; no {
		return keep(c.seen, fmt.Errorf("%s %s is not supported: %s", c.flag, v, why))
	}
	if !slices.Contains(c.ok, v) {
		return keep(c.seen, fmt.Errorf("unknown %s %q: use %s", c.flag, v, strings.Join(c.ok, " or ")))
	}
	c.val = v
	if c.to != nil {
		*c.to = v
	}
	return nil
}

// counter is a boolean flag that counts how often it is given.
type counter struct{ n *int }

func (c counter) String() string {
	if c.n == nil {
		return "0"
	}
	return strconv.Itoa(*c.n)
}

func (c counter) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	if b {
		*c.n++
	}
	return nil
}

func (c counter) IsBoolFlag() bool { return true }

// refused is a flag that stops the command line with its reason.
type refused struct {
	why    string
	isBool bool
	seen   *error
}

func (r refused) String() string         { return "" }
func (r refused) Set(string) error       { return keep(r.seen, refusedFlagError(r.why)) }
func (r refused) IsBoolFlag() bool       { return r.isBool }
func (r refusedFlagError) Error() string { return string(r) }

// refusedFlagError is a refused flag's reason.
type refusedFlagError string

// noted is a flag accepted without an effect: it prints why.
type noted struct {
	name, why string
	out       io.Writer
	isBool    bool
}

func (n noted) String() string { return "" }
func (n noted) Set(string) error {
	if n.out != nil {
		fmt.Fprintf(n.out, "note: --%s accepted: %s\n", n.name, n.why)
	}
	return nil
}
func (n noted) IsBoolFlag() bool { return n.isBool }

// countWindow is the requests of a count window with --measurement-mode
// count_windows, 0 in time windows.
func (p *PerfAnalyzerConfig) countWindow() int {
	if p.MeasurementMode != countWindows {
		return 0
	}
	return p.MeasurementRequestCount
}

// keep notes err as the refusal to report, if there is a place for it.
func keep(seen *error, err error) error {
	if seen != nil && *seen == nil {
		*seen = err
	}
	return err
}

// parseError is the error to report for a failed parse: a refused
// perf_analyzer flag's own line, without the flag package's prefix.
func (p *PerfAnalyzerConfig) parseError(err error) error {
	if p.refusal != nil && *p.refusal != nil {
		return *p.refusal
	}
	return err
}
