package session

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/triton/kserve"
)

// retryFlags say how a failed request is retried (--retries says how
// often): the backoff before each retry and the codes that are retried.
type RetryConfig struct {
	Backoff    time.Duration
	MaxBackoff time.Duration
	Codes      RetryCodes
}

// options are the retry fields of the driver's Options.
func (f *RetryConfig) options(o *driver.Options) {
	o.RetryBackoff, o.RetryMaxBackoff = f.Backoff, f.MaxBackoff
	if f.Codes.Given {
		o.RetryCodes = f.Codes.List
	}
}

// retryCodes is --retry-codes: gRPC code names as Triton and tritontop
// print them (UNAVAILABLE), or their numbers.
type RetryCodes struct {
	List  []codes.Code
	Given bool
}

func (r *RetryCodes) String() string {
	if r == nil || !r.Given {
		return ""
	}
	names := make([]string, len(r.List))
	for i, c := range r.List {
		names[i] = kserve.CodeName(c)
	}
	return strings.Join(names, ",")
}

// Set parses a comma-separated list; an empty one retries nothing.
func (r *RetryCodes) Set(v string) error {
	r.List, r.Given = []codes.Code{}, true
	for _, name := range strings.Split(v, ",") {
		name = strings.ToUpper(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		c, ok := codeByName(name)
		switch {
		case !ok:
			return fmt.Errorf("unknown gRPC code %s: use names such as UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, INTERNAL", textsafe.Quote(name))
		case c == codes.OK || c == codes.Canceled:
			return fmt.Errorf("%s is not a failure that can be retried", name)
		}
		r.List = append(r.List, c)
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

// policy is the run file's account of the retry settings: nil without
// retries.
func (f *RetryConfig) policy(retries int) *record.RetryPolicy {
	if retries <= 0 {
		return nil
	}
	list := driver.DefaultRetryCodes()
	if f.Codes.Given {
		list = f.Codes.List
	}
	p := &record.RetryPolicy{Retries: retries, Codes: []string{}}
	for _, c := range list {
		p.Codes = append(p.Codes, kserve.CodeName(c))
	}
	return p
}
