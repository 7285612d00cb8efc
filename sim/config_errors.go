package sim

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// ConfigError is a model configuration Triton refuses, in Triton's words.
// Triton finds some errors while it reads the repository (the model is
// then skipped, and a load answers only "failed to poll from model
// repository") and the others when the model loads (Load: its versions go
// UNAVAILABLE with the message, which a load answers).
type ConfigError struct {
	// Model is the model's name (its directory's).
	Model string
	// Load tells an error found when the model loads from one found while
	// reading the repository.
	Load bool
	// Code is the status Triton gives the error; InvalidArgument when 0.
	Code codes.Code
	// Msg is Triton's message.
	Msg string
	// serving tells a failed update of a loaded version in place, which
	// stays READY.
	serving bool
}

// Error implements error: Triton's message.
func (e *ConfigError) Error() string { return e.Msg }

// status is the error as Triton's Status::AsString prints it.
func (e *ConfigError) status() string {
	code := e.Code
	if code == 0 {
		code = codes.InvalidArgument
	}
	name := map[codes.Code]string{codes.InvalidArgument: "Invalid argument", codes.Internal: "Internal",
		codes.Unimplemented: "Unsupported", codes.NotFound: "Not found", codes.Unavailable: "Unavailable",
		codes.AlreadyExists: "Already exists", codes.Unknown: "Unknown"}[code]
	return name + ": " + e.Msg
}

// answer is Triton's answer to a load request that the error refused, for
// a model whose versions would have been those given.
func (e *ConfigError) answer(versions []int64) error {
	if !e.Load {
		return errPollFailed(e.Model)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "load failed for model '%s': ", textsafe.Bound(e.Model))
	state := "UNAVAILABLE"
	if e.serving {
		state = "READY"
	}
	for _, v := range versions {
		fmt.Fprintf(&b, "version %d is at %s state: %s;", v, state, e.status())
	}
	b.WriteString("\n")
	return &kserve.Error{Code: codes.InvalidArgument, Message: b.String()}
}

// errPollFailed is Triton's answer to a load whose model it could not read
// from the repository: not there, or its configuration refused.
func errPollFailed(model string) error {
	return &kserve.Error{Code: codes.Internal,
		Message: fmt.Sprintf("failed to load '%s', failed to poll from model repository", textsafe.Bound(model))}
}

// pollError is an error found while reading the repository.
func pollError(model, format string, args ...any) *ConfigError {
	return &ConfigError{Model: model, Msg: configMessage(format, args)}
}

// loadError is an error found when the model loads.
func loadError(model, format string, args ...any) *ConfigError {
	return &ConfigError{Model: model, Load: true, Msg: configMessage(format, args)}
}

// maxConfigMessage bounds the message of a ConfigError: Triton's own are
// a few hundred bytes with the names they quote.
const maxConfigMessage = 1024

// configMessage is a ConfigError's message: a value it quotes that no
// repository could hold (a string past MaxNameBytes, which a load's
// config override may carry) is quoted bounded (textsafe.Bound), and the
// message is one line of at most maxConfigMessage bytes. Values of a
// name's size come back as they are, so that the message is Triton's. A
// message composed already is passed as a composed, which is not cut.
func configMessage(format string, args []any) string {
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > MaxNameBytes { // not a composed message
			args[i] = textsafe.Bound(s)
		}
	}
	return textsafe.Excerpt(fmt.Sprintf(format, args...), maxConfigMessage)
}

// composed is a message made already (with its values bounded), passed to
// pollError or loadError whole.
type composed string
