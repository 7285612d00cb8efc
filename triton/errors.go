package triton

import (
	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
)

// Error is the error a Client returns when the server answered with one:
// a gRPC status, or an HTTP status with Triton's {"error": "..."} body. It
// is the wire's error type, kserve.Error, named here so that callers of the
// client need not import kserve.
type Error = kserve.Error

// maxErrorMessage bounds the bytes of a server's error message a Client
// keeps: Triton's messages are a line or two; a longer one is cut, with its
// length said, rather than printed whole.
const maxErrorMessage = 1024

// ErrorCode returns the gRPC code of an error a Client returned (see
// kserve.ErrorCode): the server's code, DEADLINE_EXCEEDED or CANCELLED for
// context errors, UNAVAILABLE for a transport failure.
func ErrorCode(err error) codes.Code { return kserve.ErrorCode(err) }
