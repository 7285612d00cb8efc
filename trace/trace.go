// Package trace reads and writes traces: the arrival times of inference
// requests, each with its model, version, inputs (names, datatypes, shapes
// and sizes, the tensors only when asked for), parameters and sequence id.
// The driver replays one (--trace) at its timestamps; the capture proxy
// writes one from live traffic. It reads tritontop's own JSONL trace,
// perf_analyzer's --input-data with per-request "timestamp"s, Mooncake
// JSONL traces (timestamp, input_length, output_length) and the JSON trace
// files of Triton's --trace-config, and perf_analyzer's --request-intervals
// files.
package trace

import (
	"cmp"
	"slices"
	"time"
)

// Format names a trace file's format.
type Format string

const (
	// JSONL is tritontop's own trace: a header line, then one request per
	// line (see Header and Request).
	JSONL Format = "tritontop"
	// InputData is perf_analyzer's --input-data JSON whose data sets each
	// carry a "timestamp" in milliseconds (its fixed schedule).
	InputData Format = "perf_analyzer"
	// Mooncake is a Mooncake JSONL trace: "timestamp" in milliseconds,
	// "input_length" and "output_length" in tokens.
	Mooncake Format = "mooncake"
	// Triton is the JSON array of Triton's own trace files (--trace-config,
	// trace level TIMESTAMPS, optionally TENSORS).
	Triton Format = "triton"
)

// Version is the version of tritontop's own trace format that Write
// writes; Read refuses a newer one.
const Version = 1

// Magic is the key of a tritontop trace's header line.
const Magic = "tritontop_trace"

// Header is the first line of a tritontop trace.
type Header struct {
	// Version is the format's version (Version), under the key Magic.
	Version   int       `json:"tritontop_trace"`
	StartTime time.Time `json:"start_time"`
	// Source says where the requests came from: "capture 127.0.0.1:8001 →
	// triton:8001".
	Source string `json:"source,omitempty"`
	// Tensors is set when the requests carry their tensors' contents.
	Tensors bool `json:"tensors,omitempty"`
}

// Request is one request of a trace.
type Request struct {
	// At is when the request arrived, from the trace's start (JSON:
	// microseconds, "t_us").
	At      time.Duration `json:"-"`
	AtUS    float64       `json:"t_us"`
	Model   string        `json:"model,omitempty"`
	Version string        `json:"version,omitempty"`
	// ID is the request's own id, as the client gave it.
	ID     string  `json:"id,omitempty"`
	Inputs []Input `json:"inputs,omitempty"`
	// Outputs are the outputs asked for (none: all).
	Outputs []string `json:"outputs,omitempty"`
	// Parameters are the request's parameters (string, int64, bool or
	// float64), sequence_id, sequence_start and sequence_end among them.
	Parameters map[string]any `json:"parameters,omitempty"`
	// DataRef is the index of the --input-data data set the request
	// sends, from 0; nil for none.
	DataRef *int `json:"data_ref,omitempty"`
	// InputLength and OutputLength are an LLM request's prompt and output
	// tokens (Mooncake).
	InputLength  int `json:"input_length,omitempty"`
	OutputLength int `json:"output_length,omitempty"`
	// HashIDs are a Mooncake request's prompt blocks, in order: requests
	// sharing a hash id share that block of their prompts (a prefix the
	// server may cache), as AIPerf and Mooncake mean them.
	HashIDs []int64 `json:"hash_ids,omitempty"`
	// TextInput is an LLM request's own prompt (AIPerf's Mooncake
	// "text_input"), sent as it is instead of one built to InputLength.
	TextInput string `json:"text_input,omitempty"`
	// Protocol is "grpc" or "http"; Stream is set for a request that came
	// over a ModelStreamInfer stream.
	Protocol string `json:"protocol,omitempty"`
	Stream   bool   `json:"stream,omitempty"`
	// RequestBytes and ResponseBytes are the sizes on the wire of the
	// request and of its responses together, when known.
	RequestBytes  int64 `json:"request_bytes,omitempty"`
	ResponseBytes int64 `json:"response_bytes,omitempty"`
	// Responses counts a streamed request's responses, when known.
	Responses int `json:"responses,omitempty"`
}

// Input is one input tensor of a request.
type Input struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
	// Bytes is the size of the tensor's contents.
	Bytes int64 `json:"bytes,omitempty"`
	// Data is the tensor's contents in Triton's raw form (JSON: base64),
	// only in a trace that carries tensors.
	Data []byte `json:"data,omitempty"`
}

// Trace is a trace read from a file: its requests in order of arrival.
type Trace struct {
	Format   Format
	Header   Header
	Requests []Request
}

// Span is the time from the first request to the last.
func (t *Trace) Span() time.Duration {
	if len(t.Requests) == 0 {
		return 0
	}
	return t.Requests[len(t.Requests)-1].At - t.Requests[0].At
}

// Models are the models the requests name, in order of first appearance;
// "" stands for requests that name none.
func (t *Trace) Models() []string {
	var out []string
	for _, r := range t.Requests {
		if !slices.Contains(out, r.Model) {
			out = append(out, r.Model)
		}
	}
	return out
}

// normalize sorts the requests by arrival (stably: ties keep the file's
// order) and makes the first arrive at 0.
func (t *Trace) normalize() {
	slices.SortStableFunc(t.Requests, func(a, b Request) int { return cmp.Compare(a.At, b.At) })
	if len(t.Requests) == 0 {
		return
	}
	first := t.Requests[0].At
	for i := range t.Requests {
		t.Requests[i].At -= first
		t.Requests[i].AtUS = float64(t.Requests[i].At) / float64(time.Microsecond)
	}
}

// Summary describes a trace in a line: "2000 requests over 10.2s (196/s)
// to simple, resnet50".
type Summary struct {
	Format   Format        `json:"format"`
	Requests int           `json:"requests"`
	Span     time.Duration `json:"span_ns"`
	Models   []string      `json:"models,omitempty"`
}

// Summarize returns t's summary.
func (t *Trace) Summarize() Summary {
	return Summary{Format: t.Format, Requests: len(t.Requests), Span: t.Span(), Models: t.Models()}
}
