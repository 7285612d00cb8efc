package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// MaxRequests bounds the requests of one trace: its schedule is held in
// memory (a few words per request).
const MaxRequests = 50_000_000

// ReadFile reads a trace file in any of the formats, told apart by their
// content.
func ReadFile(path string) (*Trace, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read trace %s: %w", path, errors.Unwrap(err))
	}
	t, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	return t, nil
}

// Parse reads a trace in any of the formats from its bytes.
func Parse(raw []byte) (*Trace, error) {
	b := bytes.TrimSpace(raw)
	var t *Trace
	var err error
	switch {
	case len(b) == 0:
		return nil, errors.New("is empty")
	case b[0] == '[':
		t, err = parseTriton(b)
	case b[0] == '{':
		first, _, _ := bytes.Cut(b, []byte("\n"))
		var probe map[string]json.RawMessage
		if json.Unmarshal(first, &probe) != nil {
			// Not one object per line: a whole JSON object.
			t, err = parseInputData(b)
			break
		}
		switch {
		case probe[Magic] != nil:
			t, err = parseJSONL(b)
		case probe["data"] != nil:
			t, err = parseInputData(b)
		case probe["timestamp"] != nil:
			t, err = parseMooncake(b)
		default:
			return nil, errors.New("is no trace tritontop knows: not a tritontop trace (a first line with \"tritontop_trace\"), perf_analyzer input data with timestamps ({\"data\": [...]}), a Mooncake trace (lines with \"timestamp\") or a Triton trace file (a JSON array)")
		}
	default:
		return nil, errors.New("is not JSON: a trace is JSON lines, a JSON object or a JSON array")
	}
	if err != nil {
		return nil, err
	}
	if len(t.Requests) == 0 {
		return nil, errors.New("has no requests")
	}
	t.normalize()
	return t, nil
}

// lines calls f with each non-empty line of b and its number from 1.
func lines(b []byte, f func(n int, line []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), math.MaxInt32)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if n > MaxRequests {
			return fmt.Errorf("more than %d lines", MaxRequests)
		}
		if err := f(n, line); err != nil {
			return err
		}
	}
	return sc.Err()
}

func parseJSONL(b []byte) (*Trace, error) {
	t := &Trace{Format: JSONL}
	err := lines(b, func(n int, line []byte) error {
		if n == 1 {
			if err := json.Unmarshal(line, &t.Header); err != nil {
				return fmt.Errorf("line 1: bad header: %v", err)
			}
			if t.Header.Version > Version {
				return fmt.Errorf("is a version %d tritontop trace; this tritontop reads up to version %d: upgrade it", t.Header.Version, Version)
			}
			return nil
		}
		var r Request
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&r); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if !(r.AtUS >= 0) || math.IsInf(r.AtUS, 0) {
			return fmt.Errorf("line %d: t_us must be a non-negative number of microseconds, got %v", n, r.AtUS)
		}
		r.At = time.Duration(r.AtUS * float64(time.Microsecond))
		r.Parameters = PlainParameters(r.Parameters)
		t.Requests = append(t.Requests, r)
		return nil
	})
	return t, err
}

// PlainParameters turns JSON numbers into int64 (or float64 when not
// whole), the types a request's parameters take.
func PlainParameters(p map[string]any) map[string]any {
	for k, v := range p {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				p[k] = i
			} else if f, err := n.Float64(); err == nil {
				p[k] = f
			}
		}
	}
	return p
}

// msDuration is a timestamp in milliseconds.
func msDuration(v float64, where string) (time.Duration, error) {
	if !(v >= 0) || v > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, fmt.Errorf("%s: timestamp must be a non-negative number of milliseconds, got %v", where, v)
	}
	return time.Duration(v * float64(time.Millisecond)), nil
}

func parseInputData(b []byte) (*Trace, error) {
	var top struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("not perf_analyzer input data ({\"data\": [{...}, ...]}): %v", err)
	}
	t := &Trace{Format: InputData}
	for i, set := range top.Data {
		raw, ok := set["timestamp"]
		if !ok {
			return nil, fmt.Errorf("data set %d has no \"timestamp\": each request of a fixed schedule says when it is sent, in ms", i+1)
		}
		var v []float64
		if err := json.Unmarshal(raw, &v); err != nil || len(v) != 1 {
			var one float64
			if err := json.Unmarshal(raw, &one); err != nil {
				return nil, fmt.Errorf("data set %d: \"timestamp\" must be [MS] or MS", i+1)
			}
			v = []float64{one}
		}
		at, err := msDuration(v[0], fmt.Sprintf("data set %d", i+1))
		if err != nil {
			return nil, err
		}
		ref := i
		t.Requests = append(t.Requests, Request{At: at, DataRef: &ref})
	}
	return t, nil
}

func parseMooncake(b []byte) (*Trace, error) {
	t := &Trace{Format: Mooncake}
	err := lines(b, func(n int, line []byte) error {
		var e struct {
			Timestamp    *float64 `json:"timestamp"`
			InputLength  int      `json:"input_length"`
			OutputLength int      `json:"output_length"`
			HashIDs      []int64  `json:"hash_ids"`
			TextInput    string   `json:"text_input"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if e.Timestamp == nil {
			return fmt.Errorf("line %d: no \"timestamp\" (ms)", n)
		}
		at, err := msDuration(*e.Timestamp, "line "+strconv.Itoa(n))
		if err != nil {
			return err
		}
		if e.InputLength < 0 || e.OutputLength < 0 {
			return fmt.Errorf("line %d: input_length and output_length must not be negative", n)
		}
		if e.InputLength == 0 && e.TextInput == "" {
			return fmt.Errorf("line %d: no \"input_length\" (tokens of the prompt) and no \"text_input\"", n)
		}
		t.Requests = append(t.Requests, Request{At: at, InputLength: e.InputLength, OutputLength: e.OutputLength,
			HashIDs: e.HashIDs, TextInput: e.TextInput})
		return nil
	})
	return t, err
}

// arrivalEvents are the Triton trace timestamps that mark a request's
// arrival, the earliest first: the frontend's receive, then the core's.
var arrivalEvents = []string{"HTTP_RECV_START", "GRPC_WAITREAD_START", "GRPC_WAITREAD_END", "REQUEST_START"}

func parseTriton(b []byte) (*Trace, error) {
	var entries []struct {
		ID           *uint64         `json:"id"`
		ModelName    string          `json:"model_name"`
		ModelVersion json.RawMessage `json:"model_version"`
		RequestID    string          `json:"request_id"`
		ParentID     *uint64         `json:"parent_id"`
		Timestamps   []struct {
			Name string `json:"name"`
			NS   uint64 `json:"ns"`
		} `json:"timestamps"`
		Activity string `json:"activity"`
		Tensor   *struct {
			Name  string `json:"name"`
			Shape string `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"tensor"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("not a Triton trace file (a JSON array of {\"id\": ..., \"timestamps\": [...]}): %v", err)
	}
	type traced struct {
		req    Request
		child  bool
		events map[string]uint64
	}
	byID := map[uint64]*traced{}
	var order []uint64
	for i, e := range entries {
		if e.ID == nil {
			return nil, fmt.Errorf("entry %d has no \"id\"", i+1)
		}
		tr := byID[*e.ID]
		if tr == nil {
			tr = &traced{events: map[string]uint64{}}
			byID[*e.ID] = tr
			order = append(order, *e.ID)
		}
		if e.ModelName != "" {
			tr.req.Model, tr.req.ID = e.ModelName, e.RequestID
			tr.req.Version = strings.Trim(string(e.ModelVersion), `"`)
			if tr.req.Version == "-1" || tr.req.Version == "null" {
				tr.req.Version = ""
			}
		}
		tr.child = tr.child || e.ParentID != nil
		for _, ts := range e.Timestamps {
			if old, ok := tr.events[ts.Name]; !ok || ts.NS < old {
				tr.events[ts.Name] = ts.NS
			}
		}
		if e.Activity == "TENSOR_QUEUE_INPUT" && e.Tensor != nil {
			in := Input{Name: e.Tensor.Name, Datatype: e.Tensor.Dtype}
			for _, d := range strings.Split(e.Tensor.Shape, ",") {
				if v, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64); err == nil {
					in.Shape = append(in.Shape, v)
				}
			}
			tr.req.Inputs = append(tr.req.Inputs, in)
		}
	}
	t := &Trace{Format: Triton}
	for _, id := range order {
		tr := byID[id]
		if tr.child {
			continue // a model run by an ensemble: the ensemble's request is replayed
		}
		found := false
		for _, name := range arrivalEvents {
			if ns, ok := tr.events[name]; ok {
				tr.req.At, found = time.Duration(ns), true
				break
			}
		}
		if !found {
			continue // a trace entry without an arrival (a tensor dump alone)
		}
		t.Requests = append(t.Requests, tr.req)
	}
	if len(t.Requests) == 0 {
		return nil, errors.New("has no request with an arrival timestamp (" + strings.Join(arrivalEvents, ", ") + "): was it written with --trace-config level=TIMESTAMPS?")
	}
	return t, nil
}

// ReadIntervals reads perf_analyzer's --request-intervals file: one
// interval in microseconds per line.
func ReadIntervals(path string) ([]time.Duration, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read --request-intervals %s: %w", path, errors.Unwrap(err))
	}
	return ParseIntervals(bytes.NewReader(raw), path)
}

// ParseIntervals reads intervals in microseconds, one per line; source
// names them in errors.
func ParseIntervals(r io.Reader, source string) ([]time.Duration, error) {
	sc := bufio.NewScanner(r)
	var out []time.Duration
	var total time.Duration
	n := 0
	for sc.Scan() {
		n++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || v > float64(time.Hour/time.Microsecond) {
			return nil, fmt.Errorf("--request-intervals %s: line %d %q is not an interval in microseconds (0 to an hour)", source, n, s)
		}
		d := time.Duration(v * float64(time.Microsecond))
		out = append(out, d)
		total += d
		if len(out) > MaxRequests {
			return nil, fmt.Errorf("--request-intervals %s: more than %d intervals", source, MaxRequests)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--request-intervals %s: %w", source, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--request-intervals %s: no intervals: write one per line, in microseconds", source)
	}
	if total == 0 {
		return nil, fmt.Errorf("--request-intervals %s: every interval is 0: the schedule would never advance", source)
	}
	return out, nil
}
