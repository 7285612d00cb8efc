package main

import (
	"flag"
	"fmt"

	"github.com/tritontop/tritontop/triton"
)

// endpointFlags choose the HTTP API the requests go to: KServe's infer, or
// an LLM's text through Triton's generate extension or its
// OpenAI-compatible frontend.
type endpointFlags struct {
	name string
	url  string
	kind triton.Endpoint // name, parsed by check
}

// registerEndpointFlags adds the endpoint flags to fs.
func registerEndpointFlags(fs *flag.FlagSet, f *endpointFlags) {
	fs.StringVar(&f.name, "endpoint", string(triton.EndpointInfer),
		"with -i http: infer (KServe tensors), generate or generate_stream (Triton's generate extension), "+
			"chat or completions (OpenAI-compatible /v1/chat/completions, /v1/completions; add --streaming to stream tokens)")
	fs.StringVar(&f.url, "endpoint-url", "",
		"server of the chat and completions endpoints when it is not -u's, e.g. localhost:9000 (Triton's OpenAI frontend listens on its own port)")
}

// text reports whether the requests go to a text endpoint.
func (f *endpointFlags) text() bool { return f.kind.Text() }

// check validates the flags against the rest of the run's, and makes
// generate_stream a streaming run. Errors are one line, for a usage error.
func (f *endpointFlags) check(lf *loadFlags) error {
	kind, err := triton.ParseEndpoint(f.name)
	if err != nil {
		return fmt.Errorf("--endpoint: %w", err)
	}
	f.kind = kind
	if !kind.Text() {
		if f.url != "" {
			return fmt.Errorf("--endpoint-url is where chat or completions requests go: add --endpoint chat or completions")
		}
		return nil
	}
	if lf.protocol != "http" {
		return fmt.Errorf("--endpoint %s is Triton's HTTP API: add -i http", kind)
	}
	switch kind {
	case triton.EndpointGenerate:
		if lf.streaming {
			return fmt.Errorf("--endpoint generate answers in one body: use --endpoint generate_stream to stream")
		}
	case triton.EndpointGenerateStream:
		lf.streaming = true
	}
	if f.url != "" && kind != triton.EndpointChat && kind != triton.EndpointCompletions {
		return fmt.Errorf("--endpoint-url is for chat and completions; %s goes to -u", kind)
	}
	return nil
}

// options puts the endpoint into the client's options.
func (f *endpointFlags) options(o *triton.Options, streaming bool) {
	o.Endpoint, o.EndpointURL, o.Stream = f.kind, f.url, streaming
}

// protocolName is how the header names a text endpoint's transport, e.g.
// "HTTP chat stream".
func (f *endpointFlags) protocolName(streaming bool) string {
	if streaming && f.kind != triton.EndpointGenerateStream {
		return "HTTP " + string(f.kind) + " stream"
	}
	return "HTTP " + string(f.kind)
}
