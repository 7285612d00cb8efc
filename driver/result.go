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
// small and comparisons cheap.
type Result struct {
	// Scheduled is when the request was meant to be sent: the pacer's time in
	// open loop, equal to Sent in closed loop.
	Scheduled time.Duration
	// Sent is when the request was handed to the transport.
	Sent time.Duration
	// Done is when the response (or error) arrived.
	Done time.Duration
	// Code is the gRPC status code; codes.OK for success. HTTP errors are
	// mapped to the gRPC code Triton uses for the same error.
	Code codes.Code
	// Err is the error of a failed request, nil on success. Aggregators keep
	// only a sample message per code.
	Err error
	// BytesSent and BytesReceived are body sizes on the wire.
	BytesSent     int32
	BytesReceived int32
	// Inferences is the request's batch size (1 without batching).
	Inferences int32
	// Retries is how many times the request was retried after its first try.
	Retries uint8
	// Late is set when an open-loop send happened later than its schedule by
	// more than the late threshold.
	Late bool
	// Cancelled marks a request cancelled at shutdown (not an error of the
	// server).
	Cancelled bool
	// Decoupled marks a request to a decoupled model (Options.Decoupled):
	// Done is when its final response arrived, and First, Responses and
	// Gaps time its responses. The fields below are zero for other
	// requests, whose one response is at Done.
	Decoupled bool
	// Responses counts the request's responses with outputs; an empty
	// final response, which only says that the request is complete, is
	// not one.
	Responses int32
	// First is when the first of those responses arrived; 0 when none
	// did.
	First time.Duration
	// Gaps are the times between consecutive responses (Responses − 1 of
	// them): the inter-response latency, one token apart when a response
	// is a token. The receiver owns the slice.
	Gaps []time.Duration
}

// Latency is the time from send to response, for a decoupled model to the
// final response.
func (r *Result) Latency() time.Duration { return r.Done - r.Sent }

// FirstResponse is the time from send to the first response with outputs
// (time to first token): a decoupled request's First − Sent, the latency
// of any other request.
func (r *Result) FirstResponse() time.Duration {
	if r.Decoupled && r.Responses > 0 {
		return r.First - r.Sent
	}
	return r.Done - r.Sent
}

// ScheduledLatency is the time from the scheduled send to the response: the
// coordinated-omission-correct latency in open loop.
func (r *Result) ScheduledLatency() time.Duration { return r.Done - r.Scheduled }

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Code == codes.OK && r.Err == nil }
