package triton_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton"
)

// TestShmRegisterErrorHint: the hint after the server's reason says what
// the server said to do, and names the host only where the server could
// not open the region's key. (interop's TestSharedMemoryRegistration gets
// these answers from a real Triton.)
func TestShmRegisterErrorHint(t *testing.T) {
	const disabled = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable."
	sameHost := "needs the server on this host"
	for _, c := range []struct {
		name string
		err  error
		hint string // a part of the hint; "" for none
	}{
		{"disabled, gRPC", &triton.Error{Code: codes.Unimplemented, Message: disabled}, "start the server with --allow-client-shm=true"},
		{"disabled, HTTP", &triton.Error{Code: codes.Unimplemented, HTTPStatus: 501, Message: disabled}, "start the server with --allow-client-shm=true"},
		{"key not seen", &triton.Error{Code: codes.Internal, Message: "Unable to open shared memory region: '/k'"}, sameHost},
		{"name taken", &triton.Error{Code: codes.AlreadyExists, Message: "shared memory region 'r' already in manager"}, ""},
		{"bad size", &triton.Error{Code: codes.InvalidArgument, Message: "failed to register shared memory region 'r': invalid args"}, ""},
		{"transport", errors.New("connection refused"), ""},
	} {
		e := &triton.ShmRegisterError{Key: "/k", Err: c.err}
		msg := e.Error()
		if !strings.Contains(msg, c.err.Error()) {
			t.Errorf("%s: %q lacks the server's reason %q", c.name, msg, c.err.Error())
		}
		if got := e.Hint(); c.hint == "" && got != "" || !strings.Contains(got, c.hint) {
			t.Errorf("%s: hint %q, want one with %q", c.name, got, c.hint)
		}
		if c.hint != sameHost && strings.Contains(msg, "this host") {
			t.Errorf("%s: %q blames the host", c.name, msg)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: %q is more than one line", c.name, msg)
		}
	}
}
