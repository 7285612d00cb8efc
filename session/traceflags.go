package session

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/trace"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
)

// checkTraceFlags reads --trace and --request-intervals and refuses what
// they cannot go with. A trace that names its models makes them the run's
// models, unless -m picks among them.
func checkTraceFlags(f *Config) error {
	s := &f.Shape
	if s.Trace == "" && s.RequestIntervals == "" {
		if f.Given["trace-speed"] {
			return UsageError{Err: errors.New("--trace-speed sets the pace of a --trace: add --trace FILE")}
		}
		return nil
	}
	what := "--trace"
	if s.Trace == "" {
		what = "--request-intervals"
	}
	switch {
	case s.Trace != "" && s.RequestIntervals != "":
		return UsageError{Err: errors.New("--trace and --request-intervals both set when requests are sent: give one")}
	case s.Stages != "":
		return UsageError{Err: fmt.Errorf("%s and --stages both set the load: give one", what)}
	case f.Given["concurrency"] || f.Given["request-rate"] || f.ConcurrencyRange != "" || f.RequestRateRange != "":
		return UsageError{Err: fmt.Errorf("%s sets when every request is sent: drop --concurrency, --request-rate and the ranges", what)}
	case f.Plan != nil:
		return UsageError{Err: fmt.Errorf("tritontop plan searches for the load itself: it takes no %s", what)}
	case f.LoadFile != "":
		return UsageError{Err: fmt.Errorf("%s with --load-file: a trace names its own models; give -m to pick among them", what)}
	case f.Workers.distributed():
		return UsageError{Err: fmt.Errorf("%s runs on one machine: drop --workers", what)}
	case f.Distribution == "poisson":
		return UsageError{Err: fmt.Errorf("%s sets every send's time: drop --request-distribution poisson", what)}
	case !(s.TraceSpeed > 0) || math.IsInf(s.TraceSpeed, 0):
		return UsageError{Err: fmt.Errorf("--trace-speed %v must be above 0 (2 replays twice as fast)", s.TraceSpeed)}
	}
	if s.RequestIntervals != "" {
		iv, err := trace.ReadIntervals(s.RequestIntervals)
		if err != nil {
			return UsageError{Err: err}
		}
		if len(f.ModelArgs) > 1 {
			return UsageError{Err: errors.New("--request-intervals paces one model: give -m once")}
		}
		s.intervals = iv
		return nil
	}
	t, err := trace.ReadFile(s.Trace)
	if err != nil {
		return UsageError{Err: err}
	}
	s.trace = t
	models := t.Models()
	named := slices.DeleteFunc(slices.Clone(models), func(m string) bool { return m == "" })
	switch {
	case len(f.ModelArgs) == 0 && len(named) == 0:
		return UsageError{Err: fmt.Errorf("--trace %s does not name the model of its requests (a %s trace): give -m MODEL", s.Trace, t.Format)}
	case len(f.ModelArgs) == 0:
		if len(models) != len(named) {
			return UsageError{Err: fmt.Errorf("--trace %s names the model of some requests only: give -m MODEL for the others", s.Trace)}
		}
		f.ModelArgs = named
	default:
		for _, arg := range f.ModelArgs {
			if strings.Contains(arg, "@") {
				return UsageError{Err: fmt.Errorf("-m %s: a trace sets the model's load; drop the @", textsafe.Excerpt(arg, maxQuoted))}
			}
		}
		if len(named) > 0 && !slices.ContainsFunc(f.ModelArgs, func(m string) bool { return slices.Contains(named, m) }) {
			return UsageError{Err: fmt.Errorf("--trace %s has no request for %s: it names %s", s.Trace, textsafe.Excerpt(strings.Join(f.ModelArgs, ", "), maxQuoted), textsafe.Excerpt(strings.Join(named, ", "), maxQuoted))}
		}
	}
	if t.Format == trace.InputData && f.InputData == "" {
		// perf_analyzer's fixed schedule: the file is the input data too.
		f.InputData = s.Trace
	}
	return nil
}

// scheduleFor is one model's fixed schedule and the requests it sends:
// --request-intervals over the model's requests, or the trace's requests
// for the model (those naming no model go to the run's first), each built
// from what the trace says of it.
func scheduleFor(f *Config, mt *target, first bool) (*driver.Schedule, []*triton.InferRequest, error) {
	s := &f.Shape
	if s.intervals != nil {
		return driver.IntervalSchedule(s.intervals), mt.requests, nil
	}
	t := s.trace
	if t == nil {
		return nil, mt.requests, nil
	}
	b := requestTable{mt: mt, f: f, index: map[string]int32{}}
	sched := &driver.Schedule{}
	for i := range t.Requests {
		r := &t.Requests[i]
		if r.Model != f.Model && !(r.Model == "" && first) {
			continue
		}
		idx, err := b.request(r)
		if err != nil {
			return nil, nil, UsageError{Err: fmt.Errorf("--trace %s: request %d: %w", s.Trace, i+1, err)}
		}
		sched.At = append(sched.At, time.Duration(float64(r.At)/s.TraceSpeed))
		sched.Request = append(sched.Request, idx)
	}
	if len(sched.At) == 0 {
		return nil, nil, UsageError{Err: fmt.Errorf("--trace %s has no request for model %s", s.Trace, textsafe.Quote(f.Model))}
	}
	return sched, b.reqs, nil
}

// requestTable builds a trace's requests for one model, once for each
// distinct request.
type requestTable struct {
	mt    *target
	f     *Config
	reqs  []*triton.InferRequest
	index map[string]int32
	// prompts builds Mooncake prompts from their hash ids' blocks.
	prompts *triton.BlockPrompts
}

// request returns the index of r's request, building it the first time.
func (b *requestTable) request(r *trace.Request) (int32, error) {
	base := b.mt.requests
	if len(base) == 0 && (r.DataRef != nil || len(r.Inputs) == 0) {
		return 0, errors.New("it gives no inputs, and the model's own requests were not built")
	}
	switch {
	case r.DataRef != nil:
		// A data set of --input-data (perf_analyzer's fixed schedule).
		return b.add("data:"+strconv.Itoa(*r.DataRef%len(base)), func() (*triton.InferRequest, error) {
			return base[*r.DataRef%len(base)], nil
		})
	case r.InputLength > 0 || r.OutputLength > 0 || r.TextInput != "":
		return b.add(fmt.Sprintf("llm:%d:%d:%v:%q", r.InputLength, r.OutputLength, r.HashIDs, r.TextInput), func() (*triton.InferRequest, error) {
			return b.llmRequest(r)
		})
	case len(r.Inputs) == 0:
		// Only the arrival is known: the model's requests in turn.
		n := len(b.index)
		return b.add("turn:"+strconv.Itoa(n%len(base)), func() (*triton.InferRequest, error) { return base[n%len(base)], nil })
	}
	key, err := requestKey(r)
	if err != nil {
		return 0, err
	}
	return b.add(key, func() (*triton.InferRequest, error) { return tensorRequest(r, b.f) })
}

func (b *requestTable) add(key string, build func() (*triton.InferRequest, error)) (int32, error) {
	if i, ok := b.index[key]; ok {
		return i, nil
	}
	req, err := build()
	if err != nil {
		return 0, err
	}
	if len(b.reqs) >= math.MaxInt32 {
		return 0, errors.New("too many distinct requests")
	}
	i := int32(len(b.reqs))
	b.reqs = append(b.reqs, req)
	b.index[key] = i
	return i, nil
}

// llmRequest is a Mooncake request: a prompt of exactly input_length
// tokens made of its hash ids' blocks (or its own text_input), and
// output_length tokens asked for as max_tokens and min_tokens, as
// --output-tokens-mean asks.
func (b *requestTable) llmRequest(r *trace.Request) (*triton.InferRequest, error) {
	req, err := mooncakeRequest(b.f, b.mt, r, &b.prompts)
	if err != nil {
		return nil, err
	}
	req.Version = b.f.ModelVersion
	return req, nil
}

// requestKey tells distinct requests apart: the same inputs (without
// tensors, their shapes and datatypes), parameters and version.
func requestKey(r *trace.Request) (string, error) {
	var b strings.Builder
	b.WriteString(r.Version)
	for _, in := range r.Inputs {
		fmt.Fprintf(&b, "|%s:%s:%v", in.Name, in.Datatype, in.Shape)
		if in.Data != nil {
			fmt.Fprintf(&b, ":%x", in.Data)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Parameters)) {
		fmt.Fprintf(&b, "|%s=%v", k, r.Parameters[k])
	}
	fmt.Fprintf(&b, "|%v", r.Outputs)
	return b.String(), nil
}

// tensorRequest builds a request from a trace's inputs: their tensors when
// the trace carries them, zeros otherwise (BYTES elements of the recorded
// size).
func tensorRequest(r *trace.Request, f *Config) (*triton.InferRequest, error) {
	req := &triton.InferRequest{Model: f.Model, Version: r.Version, Outputs: r.Outputs, Parameters: r.Parameters}
	if req.Version == "" {
		req.Version = f.ModelVersion
	}
	for _, in := range r.Inputs {
		n := kserve.ElementCount(in.Shape)
		if n < 0 {
			return nil, fmt.Errorf("input %s has a bad shape %s", textsafe.Bound(in.Name), textsafe.Excerpt(fmt.Sprint(in.Shape), maxQuoted))
		}
		data := in.Data
		if data == nil {
			var err error
			if data, err = zeroTensor(in, n); err != nil {
				return nil, err
			}
		}
		req.Inputs = append(req.Inputs, triton.Tensor{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape, Data: data})
	}
	return req, nil
}

// zeroTensor is n elements of zeros of in's datatype; BYTES elements share
// in.Bytes between them.
func zeroTensor(in trace.Input, n int64) ([]byte, error) {
	if in.Datatype == "BYTES" {
		per := 0
		if n > 0 && in.Bytes > 4*n {
			per = int(in.Bytes/n) - 4
		}
		if n*int64(per+4) > triton.MaxRequestBytes {
			return nil, fmt.Errorf("input %s is too large", textsafe.Bound(in.Name))
		}
		elems := make([][]byte, n)
		for i := range elems {
			elems[i] = make([]byte, per)
		}
		return kserve.EncodeBytes(elems), nil
	}
	size := kserve.ElementSize(in.Datatype)
	if size <= 0 {
		return nil, fmt.Errorf("input %s has an unknown datatype %s", textsafe.Bound(in.Name), textsafe.Quote(in.Datatype))
	}
	if n*int64(size) > triton.MaxRequestBytes {
		return nil, fmt.Errorf("input %s is too large", textsafe.Bound(in.Name))
	}
	return make([]byte, n*int64(size)), nil
}

// tracePlan is a trace's entry in the run file's header.
func tracePlan(s *ShapeConfig) *record.LoadPlan {
	switch {
	case s.trace != nil:
		sum := s.trace.Summarize()
		return &record.LoadPlan{Mode: load.Rate, Duration: time.Duration(float64(sum.Span) / s.TraceSpeed),
			Planned: float64(sum.Requests), Trace: &record.TracePlan{File: s.Trace, Format: string(sum.Format),
				Speed: s.TraceSpeed, Models: sum.Models}}
	case s.intervals != nil:
		var span time.Duration
		for _, d := range s.intervals {
			span += d
		}
		return &record.LoadPlan{Mode: load.Rate, Duration: span, Planned: float64(len(s.intervals)),
			Trace: &record.TracePlan{File: s.RequestIntervals, Format: "request-intervals", Speed: 1}}
	}
	return record.PlanOf(s.plan)
}

// traceHasInputs reports whether --trace gives the inputs of every request
// of f's model, so that the model's own requests (from --shape and
// --input-data) are not needed: a capture of a model with variable dims
// replays without --shape.
func traceHasInputs(f *Config) bool {
	t := f.Shape.trace
	if t == nil {
		return false
	}
	any := false
	for i := range t.Requests {
		r := &t.Requests[i]
		if r.Model != f.Model && r.Model != "" {
			continue
		}
		if len(r.Inputs) == 0 || r.DataRef != nil || r.InputLength > 0 || r.OutputLength > 0 {
			return false
		}
		any = true
	}
	return any
}
