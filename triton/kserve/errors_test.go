package kserve

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestTritonErrorsOverHTTP follows the table of Triton errors, their gRPC
// codes and HTTP statuses (server src/http_server.cc since v2.42).
func TestTritonErrorsOverHTTP(t *testing.T) {
	// Keyed by Triton's own error names.
	want := map[string]struct {
		code   codes.Code
		status int
	}{
		"UNKNOWN":        {codes.Unknown, 400},
		"INTERNAL":       {codes.Internal, 500},
		"NOT_FOUND":      {codes.NotFound, 404},
		"INVALID_ARG":    {codes.InvalidArgument, 400},
		"UNAVAILABLE":    {codes.Unavailable, 503},
		"UNSUPPORTED":    {codes.Unimplemented, 501},
		"ALREADY_EXISTS": {codes.AlreadyExists, 400},
		"CANCELLED":      {codes.Canceled, 400},
	}
	for name, w := range want {
		if got := HTTPStatusFor(w.code); got != w.status {
			t.Errorf("%s: HTTPStatusFor(%s) = %d, want %d", name, CodeName(w.code), got, w.status)
		}
	}
	// The way back is ambiguous for 400; the client reads it as Triton's
	// most common 400, INVALID_ARGUMENT.
	for _, code := range []codes.Code{codes.OK, codes.NotFound, codes.Unavailable, codes.Internal, codes.Unimplemented, codes.PermissionDenied, codes.InvalidArgument} {
		if back := CodeForHTTPStatus(HTTPStatusFor(code)); back != code {
			t.Errorf("CodeForHTTPStatus(HTTPStatusFor(%s)) = %s", CodeName(code), CodeName(back))
		}
	}
	if got := CodeForHTTPStatus(504); got != codes.DeadlineExceeded {
		t.Errorf("504 (a proxy's timeout) = %s, want DEADLINE_EXCEEDED", CodeName(got))
	}
	if got := CodeForHTTPStatus(502); got != codes.Unknown {
		t.Errorf("502 = %s, want UNKNOWN", CodeName(got))
	}
}

func TestErrorCode(t *testing.T) {
	server := &Error{Code: codes.NotFound, Message: "Request for unknown model: 'm' is not found"}
	cases := []struct {
		err  error
		want codes.Code
	}{
		{nil, codes.OK},
		{server, codes.NotFound},
		{fmt.Errorf("infer: %w", server), codes.NotFound},
		{context.DeadlineExceeded, codes.DeadlineExceeded},
		{fmt.Errorf("send: %w", context.Canceled), codes.Canceled},
		{errors.New("connection refused"), codes.Unavailable},
	}
	for _, c := range cases {
		if got := ErrorCode(c.err); got != c.want {
			t.Errorf("ErrorCode(%v) = %s, want %s", c.err, CodeName(got), CodeName(c.want))
		}
	}
	if got := server.Error(); got != "NOT_FOUND: Request for unknown model: 'm' is not found" {
		t.Errorf("gRPC error text = %q", got)
	}
	if got := (&Error{Code: codes.NotFound, HTTPStatus: 404, Message: "x"}).Error(); got != "HTTP 404: x" {
		t.Errorf("HTTP error text = %q", got)
	}
	if got := CodeName(codes.Code(99)); got != "CODE_99" {
		t.Errorf("CodeName(99) = %q", got)
	}
}
