// Package record keeps runs: it writes the run file of a headless
// `--record` run (one JSON line per stats.Snapshot), reads it back, replays
// it into the same consumers as a live run, and turns it into a
// perf_analyzer-style text summary, JSON, or perf_analyzer's `-f` CSV.
//
// # Run file schema (versions 1 and 2)
//
// A run file is JSON lines: UTF-8, one JSON object per line, each line ending
// in "\n". Every object has a "type" member:
//
//	{"type":"header","schema":1,"tritontop_version":"0.1.0","args":["-m","resnet50","-H","Authorization: REDACTED"],
//	 "start_time":"2026-01-02T15:04:05Z",
//	 "server":{"url":"127.0.0.1:8001","protocol":"grpc","metadata":{"name":"triton","version":"2.73.0","extensions":[...]},"simulated":false},
//	 "model":{"name":"resnet50","version":"1","metadata":{...ModelMetadataResponse...},"config":{...ModelConfig...}},
//	 "load":{"mode":"concurrency","concurrency":8,"in_flight":0},
//	 "interval_ns":1000000000,"window_ns":10000000000}
//	{"type":"snapshot","seq":1,"time":"...","elapsed_ns":...,...every stats.Snapshot field at top level...}
//	...one snapshot line per tick...
//	{"type":"step",...every Step field at top level...}      (stepped runs: one per measured step)
//	{"type":"summary",...every Summary field at top level...}
//
// The first line is the header; schema is SchemaVersion. The header of one
// worker's share of a distributed run (--workers) has a "worker" member, and
// that of a file merged from the workers' files (tritontop merge) a "merged"
// member: see Worker, Merged and Merge. Secrets never reach
// the file: RedactArgs replaces the values of authorization-like -H/--header
// flags, secret-named flags and TLS private key paths with "REDACTED". The
// server and model metadata and the model config are the server's protobuf
// messages rendered by protojson with the proto field names (as
// perf_analyzer and Triton's HTTP API spell them), so a reader needs no
// generated code. Snapshot lines carry stats.Snapshot's JSON fields inline;
// its JSON tags are the snapshot schema. The summary line, written when the
// run ends normally, carries Summary's fields inline; a run killed before it
// simply has none.
//
// Schema 2 is a run over several models (tritontop -m a -m b): its header
// has a "models" member (one ModelInfo per model, each with its initial
// load) and every snapshot a "models" member (stats.Model), while the
// top-level load, client and server numbers are the aggregate over the
// models. A reader of schema 1 would take that aggregate for one model's
// numbers, so such a file says schema 2, which schema-1 readers refuse. A
// run of one model has neither member and still writes schema 1.
//
// Lines are written whole, each with a single write(2) of the full line and
// its newline on a file opened O_APPEND, so a crash leaves at most one
// incomplete last line, which readers skip (Run.Truncated). Readers ignore
// lines of a type they do not know, so later versions may add line types
// and fields without a schema bump; a change that would mislead an old
// reader increments SchemaVersion, and readers refuse schemas newer than
// their own.
package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/stats"
)

// SchemaVersion is the newest run-file schema this package reads and
// writes: 2 for a run over several models, 1 otherwise (see Header.Models).
const SchemaVersion = 2

// schemaOf is the schema a run file with header h is written in: the
// oldest whose readers read it right.
func schemaOf(h Header) int {
	if len(h.Models) > 0 {
		return 2
	}
	return 1
}

// Line types, the value of every line's "type" member.
const (
	TypeHeader   = "header"
	TypeSnapshot = "snapshot"
	TypeSummary  = "summary"
	// TypeStep lines carry one measured Step of a stepped run, written when
	// the step ends, after the snapshots it covers.
	TypeStep = "step"
)

// Header is the first line of a run file: what was measured and how.
type Header struct {
	// Schema is the run-file schema version; Create sets it: 2 with
	// Models, else 1.
	Schema           int    `json:"schema"`
	TritontopVersion string `json:"tritontop_version"`
	// Args are the command-line arguments after the program name, with
	// secrets replaced (see RedactArgs; Create applies it).
	Args      []string   `json:"args"`
	StartTime time.Time  `json:"start_time"`
	Server    ServerInfo `json:"server"`
	// Model is the model measured; in a run over several models, its
	// Name lists them all, comma-separated, and Models has each one.
	Model ModelInfo `json:"model"`
	// Models are the models of a run over several models (schema 2), in
	// the order of the Snapshots' Models entries, each with its initial
	// load; nil with one model.
	Models []ModelInfo `json:"models,omitempty"`
	// Load is the load profile at the start of the run.
	Load stats.Load `json:"load"`
	// Interval is the tick length and Window the "last N s" window length.
	Interval time.Duration `json:"interval_ns"`
	Window   time.Duration `json:"window_ns"`
	// Worker is set on one worker's share of a load that several processes
	// drive together (--workers); Merged on a file merged from such shares.
	Worker *Worker `json:"worker,omitempty"`
	Merged *Merged `json:"merged,omitempty"`
	// Repeats is N of a run of --repeat N: the file holds N runs of the
	// same load one after the other, each snapshot and step with its
	// repeat (1 to N), numbered on across repeats.
	Repeats int `json:"repeats,omitempty"`
	// Plan is the run's load plan (--stages), nil without one.
	Plan *LoadPlan `json:"plan,omitempty"`
	// Retry is the run's retry policy (--retries, --retry-codes), nil
	// when failed requests were not retried.
	Retry *RetryPolicy `json:"retry,omitempty"`
}

// RetryPolicy says how a run retried failed requests: at most Retries times
// each, on the gRPC codes named in Codes (as Triton names them, e.g.
// UNAVAILABLE).
type RetryPolicy struct {
	Retries int      `json:"retries"`
	Codes   []string `json:"codes"`
}

// ServerInfo identifies the server a run measured.
type ServerInfo struct {
	URL      string `json:"url"`
	Protocol string `json:"protocol"`
	// Metadata is the ServerMetadataResponse (name, version, extensions) as
	// protojson with proto field names; see ProtoJSON.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Simulated is set when the server was tritontop's own simulator.
	Simulated bool `json:"simulated"`
	// InProcess is set when the server ran inside tritontop's own process
	// (tritontop demo): the recorded client CPU then includes the server's.
	InProcess bool `json:"in_process,omitempty"`
	// DemoGPU says how tritontop demo (or plan --demo) sized the simulated
	// GPU to the host it ran on; empty otherwise.
	DemoGPU string `json:"demo_gpu,omitempty"`
	// Replicas are the servers of a run over several replicas of the
	// model, in the order their Snapshot.Replicas entries follow, and
	// Balance how requests were spread over them ("least" or "rr"). URL
	// then lists them all, comma-separated, and Metadata is the first
	// one's.
	Replicas []string `json:"replicas,omitempty"`
	Balance  string   `json:"balance,omitempty"`
}

// ModelInfo identifies the model a run measured.
type ModelInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Metadata is the ModelMetadataResponse and Config the ModelConfig, as
	// protojson with proto field names; see ProtoJSON.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Config   json.RawMessage `json:"config,omitempty"`
	// Load is a model's load at the start of a run over several models
	// (Header.Models); nil otherwise (Header.Load).
	Load *stats.Load `json:"load,omitempty"`
	// Plan is the model's load plan in a run over several models.
	Plan *LoadPlan `json:"plan,omitempty"`
}

// ProtoJSON renders a protobuf message for a Header the way perf_analyzer
// reads Triton's config over gRPC: JSON with the original proto field names.
// A nil message (or typed nil pointer) gives nil, which the header omits.
func ProtoJSON(m proto.Message) (json.RawMessage, error) {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil, nil
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s as JSON: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	// protojson output is deliberately unstable in whitespace; compact it so
	// the header stays one line.
	return compactJSON(b)
}

func compactJSON(b []byte) (json.RawMessage, error) {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, fmt.Errorf("compact JSON: %w", err)
	}
	return json.RawMessage(out.Bytes()), nil
}

// headerLine, snapshotLine and summaryLine are the on-disk shapes: the
// payload's fields inline next to "type".
type headerLine struct {
	Type string `json:"type"`
	Header
}

type snapshotLine struct {
	Type string `json:"type"`
	stats.Snapshot
}

type stepLine struct {
	Type string `json:"type"`
	Step
}

type summaryLine struct {
	Type string `json:"type"`
	Summary
}

// lineProbe reads just enough of any line to dispatch on it.
type lineProbe struct {
	Type   string `json:"type"`
	Schema *int   `json:"schema"`
}
