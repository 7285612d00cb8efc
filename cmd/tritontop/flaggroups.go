package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/internal/tokenizer"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/triton"
)

// registerWorkerFlags adds the distributed-run flags to a load run's flags.
func registerWorkerFlags(fs *flag.FlagSet, w *session.WorkersConfig) {
	fs.IntVar(&w.Count, "workers", w.Count, "run as one of N workers that drive the load together (with --worker-index): this process drives its share of --concurrency or --request-rate, and of each level of a range; merge their run files with tritontop merge")
	fs.IntVar(&w.Index, "worker-index", w.Index, "which of the --workers this process is, 0 to N-1 (a Kubernetes Indexed Job's $(JOB_COMPLETION_INDEX))")
	fs.StringVar(&w.StartAt, "start-at", w.StartAt, "wait until this wall-clock time, RFC 3339 (2026-05-04T12:00:00Z), before starting: workers given the same time start, tick and step together")
	fs.StringVar(&w.PrometheusAddr, "prometheus-addr", w.PrometheusAddr, "serve the run's client statistics for Prometheus at http://ADDR/metrics (such as :9099) while it runs, and for one --prometheus-scrape-interval after it ends (unless interrupted) so that the last ticks are scraped")
	fs.DurationVar(&w.ScrapeInterval, "prometheus-scrape-interval", w.ScrapeInterval, "Prometheus' scrape interval: how long --prometheus-addr keeps serving after the run (0: stop at once)")
}

// registerEndpointFlags adds the endpoint flags to fs.
func registerEndpointFlags(fs *flag.FlagSet, f *session.EndpointConfig) {
	fs.StringVar(&f.Name, "endpoint", f.Name,
		"with -i http: infer (KServe tensors), generate or generate_stream (Triton's generate extension), "+
			"chat or completions (OpenAI-compatible /v1/chat/completions, /v1/completions; add --streaming to stream tokens)")
	fs.StringVar(&f.URL, "endpoint-url", f.URL,
		"server of the chat and completions endpoints when it is not -u's, e.g. localhost:9000 (Triton's OpenAI frontend listens on its own port)")
	fs.IntVar(&f.InputTokensMean, "synthetic-input-tokens-mean", f.InputTokensMean,
		fmt.Sprintf("an LLM's prompts: mean length in tokens of the embedded tokenizer, %s (default %d; same as --prompt-tokens)", tokenizer.Name, triton.DefaultPromptTokens))
	fs.Float64Var(&f.InputTokensStdDev, "synthetic-input-tokens-stddev", f.InputTokensStdDev, "standard deviation of the prompts' length in tokens (0: all of the mean)")
	fs.IntVar(&f.OutputTokensMean, "output-tokens-mean", f.OutputTokensMean, "an LLM's output length in tokens, asked with max_tokens and min_tokens (0: the model decides, up to max_tokens)")
	fs.Float64Var(&f.OutputTokensStdDev, "output-tokens-stddev", f.OutputTokensStdDev, "standard deviation of the output length in tokens")
	fs.IntVar(&f.NumPrompts, "num-prompts", f.NumPrompts, fmt.Sprintf("number of different LLM requests (prompts and output lengths) sent in turn (default 1, or %d with a standard deviation)", triton.DefaultPrompts))
}

// registerLLMFlags adds the flags for LLMs and decoupled models to fs.
func registerLLMFlags(fs *flag.FlagSet, f *session.LLMConfig) {
	fs.Var(repeated{&f.RequestParameters}, "request-parameter",
		"request parameter NAME:VALUE:TYPE sent with every request, TYPE string, int or bool, e.g. max_tokens:256:int (repeatable)")
	fs.IntVar(&f.PromptTokens, "prompt-tokens", f.PromptTokens,
		fmt.Sprintf("length in words (approximating tokens) of the prompt generated for an LLM's text_input (default %d)", triton.DefaultPromptTokens))
}

// registerMooncakeFlags adds the flags of a Mooncake trace's replay to fs.
func registerMooncakeFlags(fs *flag.FlagSet, f *session.MooncakeConfig) {
	fs.IntVar(&f.BlockTokens, "isl-block-size", f.BlockTokens,
		"tokens of the prompt block each hash id of a Mooncake --trace stands for (AIPerf's --isl-block-size): requests sharing hash ids share those blocks of their prompts")
}

// sloList is a flag.Value that takes SLOs given once each or several to a
// flag, separated by commas.
type sloList struct{ list *[]string }

func (s sloList) String() string {
	if s.list == nil {
		return ""
	}
	return strings.Join(*s.list, ",")
}

func (s sloList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*s.list = append(*s.list, part)
		}
	}
	return nil
}

// registerSLOFlags adds --slo to fs.
func registerSLOFlags(fs *flag.FlagSet, f *session.SLOConfig) {
	fs.Var(sloList{&f.Specs}, "slo",
		"an SLO: [ttft-|itl-]pNN:DURATION (p99:100ms, ttft-p99:500ms) or avg:DURATION; repeatable or comma-separated, all must hold. "+
			"tritontop plan (required there) searches the highest level meeting them; a run of an LLM counts its goodput, the requests whose own latency, time to first token and mean time between tokens met them all at once")
}

// registerRetryFlags adds the retry flags to fs.
func registerRetryFlags(fs *flag.FlagSet, f *session.RetryConfig) {
	fs.DurationVar(&f.Backoff, "retry-backoff", f.Backoff,
		"wait before the first retry; each further retry waits twice as long, up to --retry-max-backoff, jittered over the upper half")
	fs.DurationVar(&f.MaxBackoff, "retry-max-backoff", f.MaxBackoff,
		"the longest wait between two tries of a request")
	fs.Var(&f.Codes, "retry-codes",
		"gRPC codes retried with --retries, comma-separated (default UNAVAILABLE,RESOURCE_EXHAUSTED: nothing ran; DEADLINE_EXCEEDED and INTERNAL only when named)")
}

// registerSecretFlags adds --record-headers to fs.
func registerSecretFlags(fs *flag.FlagSet, f *session.SecretsConfig) {
	fs.Var(repeated{&f.RecordHeaders}, "record-headers",
		"record this -H header's value in the run file's arguments (repeatable, or NAME,NAME); every other header's value is written as REDACTED")
}

// registerShapeFlags adds the load-shape flags to fs.
func registerShapeFlags(fs *flag.FlagSet, f *session.ShapeConfig) {
	fs.StringVar(&f.Stages, "stages", f.Stages,
		"a load plan: DURATION:TARGET,... each ramping linearly from the last target (0 first) to a rate N/s or a concurrency c=N, e.g. 30s:100/s,2m:500/s,30s:0/s; the run ends with the plan, and ↑/↓ scale the rest of it")
	fs.StringVar(&f.Trace, "trace", f.Trace,
		"replay the requests of a trace FILE at its timestamps: tritontop's JSONL trace (tritontop capture), perf_analyzer input data with \"timestamp\"s, a Mooncake JSONL trace or a Triton trace file; the run ends after its last request")
	fs.Float64Var(&f.TraceSpeed, "trace-speed", f.TraceSpeed, "with --trace: replay this many times faster (2 halves the gaps)")
	fs.StringVar(&f.RequestIntervals, "request-intervals", f.RequestIntervals,
		"open loop: a FILE of intervals between requests in microseconds, one per line, looped (perf_analyzer's)")
}

// registerSequenceFlags adds the flags for stateful models to fs.
func registerSequenceFlags(fs *flag.FlagSet, f *session.SequenceConfig) {
	fs.IntVar(&f.Length, "sequence-length", f.Length,
		"stateful models: base length of a sequence, in requests")
	fs.Float64Var(&f.Variation, "sequence-length-variation", f.Variation,
		"stateful models: how far a sequence's length varies either way, in percent of --sequence-length")
	fs.StringVar(&f.IDRange, "sequence-id-range", f.IDRange,
		"stateful models: correlation ids START[:END], END excluded, wrapping within the range (default: from 1, 2^32-1 ids)")
	fs.IntVar(&f.Count, "num-of-sequences", f.Count,
		"stateful models, open loop: sequences live at once (closed loop runs one per request in flight)")
	fs.BoolVar(&f.Serial, "serial-sequences", f.Serial,
		"stateful models, open loop: at most one request in flight per sequence")
}

// registerGateFlags adds the CI gate flags to fs.
func registerGateFlags(fs *flag.FlagSet, f *session.GatesConfig) {
	fs.Var(repeated{&f.Thresholds}, "threshold",
		"fail the run (exit 99) unless METRIC<LIMIT holds over it, e.g. 'p99<100ms', 'errors<1%', 'throughput>500', 'ttft-p99<500ms', 'queue<5ms' (repeatable; metrics: "+gate.MetricNames()+")")
	fs.BoolVar(&f.PerStep, "threshold-per-step", f.PerStep, "check each --threshold over every step of the run too, not only over the whole run")
	fs.BoolVar(&f.AbortOnFail, "abort-on-fail", f.AbortOnFail, "end the run early when a --threshold fails over the sliding --window at every tick for a whole window")
	fs.StringVar(&f.JUnit, "junit", f.JUnit, "write the thresholds' checks to FILE as JUnit XML, one testcase each, for a CI system's test view")
	fs.IntVar(&f.Repeat, "repeat", f.Repeat, "run the same load N times (fresh connections, --repeat-pause between) and record every repeat; the summary gives each figure's median and spread")
	fs.DurationVar(&f.RepeatPause, "repeat-pause", f.RepeatPause, "with --repeat: the pause between repeats, so one repeat's queue does not spill into the next")
	fs.StringVar(&f.StepSummary, "step-summary", f.StepSummary, "append the summary as Markdown to FILE at the end, e.g. --step-summary \"$GITHUB_STEP_SUMMARY\" for a GitHub Actions job summary")
}
