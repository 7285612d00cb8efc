package kserve

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
)

// Error is an error answered by the server: a gRPC status, or an HTTP status
// with Triton's {"error": "..."} body. Code is the gRPC code for both, so
// that statistics can group errors the same way whatever the protocol;
// HTTPStatus is set only for HTTP. The simulator answers with the same type,
// and its frontends turn Code into the gRPC status or, with HTTPStatusFor,
// the HTTP status Triton would send.
type Error struct {
	Code       codes.Code
	HTTPStatus int
	Message    string
}

// Error implements error.
func (e *Error) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("HTTP %d: %s", e.HTTPStatus, e.Message)
	}
	return fmt.Sprintf("%s: %s", CodeName(e.Code), e.Message)
}

// CodeName returns the upper-case gRPC name of a code ("NOT_FOUND").
func CodeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("CODE_%d", uint32(c))
}

var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// HTTPStatusFor maps a gRPC code to the HTTP status Triton answers with
// (server src/http_server.cc, since v2.42).
func HTTPStatusFor(c codes.Code) int {
	switch c {
	case codes.OK:
		return 200
	case codes.NotFound:
		return 404
	case codes.Unavailable:
		return 503
	case codes.Internal:
		return 500
	case codes.Unimplemented:
		return 501
	case codes.PermissionDenied:
		return 403
	default:
		return 400
	}
}

// CodeForHTTPStatus is the inverse of HTTPStatusFor, used by the HTTP
// client; 400 maps to INVALID_ARGUMENT, Triton's most common 400.
func CodeForHTTPStatus(status int) codes.Code {
	switch {
	case status < 300:
		return codes.OK
	case status == 404:
		return codes.NotFound
	case status == 503:
		return codes.Unavailable
	case status == 500:
		return codes.Internal
	case status == 501:
		return codes.Unimplemented
	case status == 403:
		return codes.PermissionDenied
	case status == 408 || status == 504:
		return codes.DeadlineExceeded
	default:
		if status >= 500 {
			return codes.Unknown
		}
		return codes.InvalidArgument
	}
}

// ErrorCode returns the gRPC code of err: the server's code for an *Error,
// DEADLINE_EXCEEDED or CANCELLED for context errors, UNAVAILABLE for
// anything else (a transport failure).
func ErrorCode(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var te *Error
	if errors.As(err, &te) {
		return te.Code
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Unavailable
}
