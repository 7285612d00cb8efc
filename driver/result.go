// Package driver generates load against a Triton server through a
// triton.Client: closed loop (a fixed number of requests in flight) or open
// loop (a request rate, constant or Poisson, with coordinated-omission-correct
// timing), changeable while running through Control. Every finished request
// becomes a Result delivered in batches to the stats aggregator; nothing per
// request is kept.
package driver

import (
	"time"

	"google.golang.org/grpc/codes"
)

// Result is what the driver knows about one finished request. Times are
// offsets from the run's start on the monotonic clock, which keeps a Result
// small and comparisons cheap: 80 bytes, its fields ordered so that a
// decoupled model's count and flag fill what would be padding, and the
// replica's index the half word that a batch size does not need
// (TestResultSize).
type Result struct {
	// Scheduled is when the request was meant to be sent: the pacer's time in
	// open loop, equal to Sent in closed loop.
	Scheduled time.Duration
	// Sent is when the request was handed to the transport.
	Sent time.Duration
	// Done is when the response (or error) arrived; for a decoupled model,
	// the final response.
	Done time.Duration
	// Err is the error of a failed request, nil on success. Aggregators keep
	// only a sample message per code.
	Err error
	// Code is the gRPC status code; codes.OK for success. HTTP errors are
	// mapped to the gRPC code Triton uses for the same error.
	Code codes.Code
	// BytesSent and BytesReceived are body sizes on the wire (for a
	// decoupled model, of all its responses).
	BytesSent     int32
	BytesReceived int32
	// Inferences is the request's batch size (1 without batching), at most
	// MaxBatchSize.
	Inferences uint16
	// Endpoint is the replica that answered (the last try's), its index
	// among a Balancer's replicas; 0 with one server.
	Endpoint uint16
	// Responses counts a decoupled model's responses with outputs; an
	// empty final response, which only says that the request is complete,
	// is not one. 0 for other models.
	Responses int32
	// Retries is how many times the request was retried after its first try.
	Retries uint8
	// Late is set when an open-loop send happened later than its schedule by
	// more than the late threshold.
	Late bool
	// Cancelled marks a request cancelled at shutdown (not an error of the
	// server).
	Cancelled bool
	// Decoupled marks a request to a decoupled model (Options.Decoupled):
	// Done is its final response, and Responses and Timing account for the
	// responses before it.
	Decoupled bool
	// ClientSend and ClientRecv are the client's own part of a request's
	// last try, in ns (saturated at about 4.3 s): encoding and handing it
	// to the transport, and receiving and decoding the response
	// (triton.Phases for a unary request; for one over a stream, the
	// final response, see streamPhases). 0 when not timed.
	ClientSend, ClientRecv uint32
	// Timing is when a decoupled model's responses arrived, and a
	// sequence's latency; nil for other requests.
	Timing *ResponseTiming
}

// ResponseTiming is what a decoupled model's request, or the last request
// of a stateful model's sequence, adds to its Result. Kept apart from
// Result so that other requests' results stay small.
type ResponseTiming struct {
	// First is when a decoupled model's first response with outputs
	// arrived, and Gaps the times between consecutive responses
	// (Responses − 1 of them), the inter-response latency, one token apart
	// when a response is a token.
	First time.Duration
	Gaps  []time.Duration
	// Tokens is the request's output tokens: the count the server
	// reported (a text endpoint's usage), else, for a model that
	// generates text (its requests carry a BYTES text_input), one per
	// response. 0 for any other model: its responses are not tokens.
	Tokens int32
	// Sequence is set on the last request of a stateful model's sequence
	// (Options.Sequences) when it succeeded: the time from the sequence's
	// first send to this response.
	Sequence time.Duration
}

// SequenceLatency is the latency of the sequence a successful result
// ended, 0 for any other result.
func (r *Result) SequenceLatency() time.Duration {
	if r.Timing == nil {
		return 0
	}
	return r.Timing.Sequence
}

// Latency is the time from send to response, for a decoupled model to the
// final response.
func (r *Result) Latency() time.Duration { return r.Done - r.Sent }

// FirstResponse is the time from send to the first response with outputs
// (time to first token) of a decoupled model, the latency of any other
// request.
func (r *Result) FirstResponse() time.Duration {
	if r.Decoupled && r.Timing != nil {
		return r.Timing.First - r.Sent
	}
	return r.Done - r.Sent
}

// ScheduledLatency is the time from the scheduled send to the response: the
// coordinated-omission-correct latency in open loop.
func (r *Result) ScheduledLatency() time.Duration { return r.Done - r.Scheduled }

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Code == codes.OK && r.Err == nil }
