package trace

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		format Format
		at     []time.Duration
		check  func(t *testing.T, tr *Trace)
	}{
		{"tritontop", `{"tritontop_trace":1,"start_time":"2026-01-01T00:00:00Z"}
{"t_us":1500,"model":"b","inputs":[{"name":"X","datatype":"FP32","shape":[1,4],"bytes":16}],"parameters":{"sequence_id":7,"sequence_start":true}}
{"t_us":500,"model":"a","version":"2"}
`, JSONL, []time.Duration{0, time.Millisecond}, func(t *testing.T, tr *Trace) {
			r := tr.Requests[1]
			if r.Model != "b" || r.Inputs[0].Shape[1] != 4 || r.Parameters["sequence_id"] != int64(7) || r.Parameters["sequence_start"] != true {
				t.Errorf("request %+v", r)
			}
			if got := tr.Models(); len(got) != 2 || got[0] != "a" {
				t.Errorf("models %v", got)
			}
		}},
		{"perf_analyzer", `{"data":[{"INPUT0":[1],"timestamp":[1000]},{"INPUT0":[2],"timestamp":[2500]}]}`,
			InputData, []time.Duration{0, 1500 * time.Millisecond}, func(t *testing.T, tr *Trace) {
				if *tr.Requests[1].DataRef != 1 {
					t.Errorf("data ref %v", *tr.Requests[1].DataRef)
				}
			}},
		{"mooncake", `{"timestamp": 0, "input_length": 655, "output_length": 52, "hash_ids": [46, 47]}
{"timestamp": 10535, "input_length": 672, "output_length": 26}
{"timestamp": 10535.5, "text_input": "What is Triton?", "output_length": 3}
`, Mooncake, []time.Duration{0, 10535 * time.Millisecond, 10535500 * time.Microsecond}, func(t *testing.T, tr *Trace) {
			if tr.Requests[1].InputLength != 672 || tr.Requests[1].OutputLength != 26 {
				t.Errorf("request %+v", tr.Requests[1])
			}
			if h := tr.Requests[0].HashIDs; len(h) != 2 || h[0] != 46 || h[1] != 47 || tr.Requests[1].HashIDs != nil {
				t.Errorf("hash ids %v, %v", h, tr.Requests[1].HashIDs)
			}
			if tr.Requests[2].TextInput != "What is Triton?" {
				t.Errorf("text_input %q", tr.Requests[2].TextInput)
			}
		}},
		{"triton", `[
  {"id": 1, "model_name": "simple", "model_version": 1},
  {"id": 1, "timestamps": [{"name": "HTTP_RECV_START", "ns": 2000000500}]},
  {"id": 1, "timestamps": [{"name": "REQUEST_START", "ns": 2000000900}]},
  {"id": 1, "activity": "TENSOR_QUEUE_INPUT", "tensor": {"name": "INPUT0", "data": "1,2", "shape": "1,16", "dtype": "INT32"}},
  {"id": 2, "model_name": "simple", "model_version": -1},
  {"id": 2, "timestamps": [{"name": "GRPC_WAITREAD_END", "ns": 2003000500}, {"name": "REQUEST_START", "ns": 2003000600}]},
  {"id": 3, "model_name": "child", "model_version": 1, "parent_id": 2},
  {"id": 3, "timestamps": [{"name": "REQUEST_START", "ns": 2003000700}]}
]`, Triton, []time.Duration{0, 3 * time.Millisecond}, func(t *testing.T, tr *Trace) {
			r := tr.Requests[0]
			if r.Model != "simple" || r.Version != "1" || len(r.Inputs) != 1 || r.Inputs[0].Shape[1] != 16 {
				t.Errorf("request %+v", r)
			}
			if tr.Requests[1].Version != "" {
				t.Errorf("version -1 is the server's choice, got %q", tr.Requests[1].Version)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != tc.format || len(tr.Requests) != len(tc.at) {
				t.Fatalf("format %s, %d requests", tr.Format, len(tr.Requests))
			}
			for i, at := range tc.at {
				if tr.Requests[i].At != at {
					t.Errorf("request %d at %v, want %v", i, tr.Requests[i].At, at)
				}
			}
			tc.check(t, tr)
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "is empty"},
		{"hello", "is not JSON"},
		{`{"x":1}`, "is no trace tritontop knows"},
		{`{"data":[{"INPUT0":[1]}]}`, "has no \"timestamp\""},
		{`{"tritontop_trace":99}`, "version 99"},
		{"{\"tritontop_trace\":1}\n{\"t_us\":-5}", "non-negative"},
		{`{"timestamp": -1}`, "non-negative"},
		{"{\"timestamp\": 0, \"input_length\": 5}\n{\"timestamp\": 1, \"output_length\": 5}", "line 2: no \"input_length\""},
		{`[{"id":1,"model_name":"m"}]`, "no request with an arrival"},
	} {
		if _, err := Parse([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestWriteThenRead(t *testing.T) {
	var b bytes.Buffer
	start := time.Now()
	w, err := NewWriter(&b, Header{StartTime: start, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r := Request{Model: "simple", Inputs: []Input{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}, Bytes: 64}}}
		if err := w.Write(r, start.Add(time.Duration(i)*1500*time.Microsecond+time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.Version != Version || tr.Header.Source != "test" || len(tr.Requests) != 3 || tr.Requests[2].At != 3*time.Millisecond {
		t.Errorf("read back %+v", tr)
	}
}

func TestParseIntervals(t *testing.T) {
	got, err := ParseIntervals(strings.NewReader("100000\n\n200000\n500000\n"), "x")
	if err != nil || len(got) != 3 || got[2] != 500*time.Millisecond {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, in := range []string{"", "abc", "-5", "0\n0"} {
		if _, err := ParseIntervals(strings.NewReader(in), "x"); err == nil {
			t.Errorf("ParseIntervals(%q) accepted", in)
		}
	}
}
