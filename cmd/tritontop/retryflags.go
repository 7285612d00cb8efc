package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/triton/kserve"
)

// retryFlags say how a failed request is retried (--retries says how
// often): the backoff before each retry and the codes that are retried.
type retryFlags struct {
	backoff    time.Duration
	maxBackoff time.Duration
	codes      retryCodes
}

// registerRetryFlags adds the retry flags to fs.
func registerRetryFlags(fs *flag.FlagSet, f *retryFlags) {
	fs.DurationVar(&f.backoff, "retry-backoff", driver.DefaultRetryBackoff,
		"wait before the first retry; each further retry waits twice as long, up to --retry-max-backoff, jittered over the upper half")
	fs.DurationVar(&f.maxBackoff, "retry-max-backoff", driver.DefaultRetryMaxBackoff,
		"the longest wait between two tries of a request")
	fs.Var(&f.codes, "retry-codes",
		"gRPC codes retried with --retries, comma-separated (default UNAVAILABLE,RESOURCE_EXHAUSTED: nothing ran; DEADLINE_EXCEEDED and INTERNAL only when named)")
}

// options are the retry fields of the driver's Options.
func (f *retryFlags) options(o *driver.Options) {
	o.RetryBackoff, o.RetryMaxBackoff = f.backoff, f.maxBackoff
	if f.codes.set {
		o.RetryCodes = f.codes.list
	}
}

// retryCodes is --retry-codes: gRPC code names as Triton and tritontop
// print them (UNAVAILABLE), or their numbers.
type retryCodes struct {
	list []codes.Code
	set  bool
}

func (r *retryCodes) String() string {
	if r == nil || !r.set {
		return ""
	}
	names := make([]string, len(r.list))
	for i, c := range r.list {
		names[i] = kserve.CodeName(c)
	}
	return strings.Join(names, ",")
}

// Set parses a comma-separated list; an empty one retries nothing.
func (r *retryCodes) Set(v string) error {
	r.list, r.set = []codes.Code{}, true
	for _, name := range strings.Split(v, ",") {
		name = strings.ToUpper(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		c, ok := codeByName(name)
		switch {
		case !ok:
			return fmt.Errorf("unknown gRPC code %q: use names such as UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, INTERNAL", name)
		case c == codes.OK || c == codes.Canceled:
			return fmt.Errorf("%s is not a failure that can be retried", name)
		}
		r.list = append(r.list, c)
	}
	return nil
}

// codeByName finds a gRPC code by its upper-case name.
func codeByName(name string) (codes.Code, bool) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if kserve.CodeName(c) == name || (name == "CANCELED" && c == codes.Canceled) {
			return c, true
		}
	}
	return 0, false
}
