package session

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton"
)

// secretFlags say which header values a run may record. By default none
// is: a header's value is never printed (not even in an error about it) nor
// written to any file a run makes, whatever the header's name.
type SecretsConfig struct {
	RecordHeaders []string
}

// checkSecrets refuses, before anything else runs, what would put a secret
// where it could be read: user information in a server or metrics URL
// (refused without echoing it), and a --record-headers name no -H gives.
func checkSecrets(f *Config) error {
	for _, u := range f.URLs {
		if triton.HasUserInfo(u) {
			return fmt.Errorf("-u: %w", triton.ErrUserInfo)
		}
	}
	for _, m := range f.MetricsURLs {
		if triton.HasUserInfo(m) {
			return errors.New("--metrics-url has user information (user:password@host), refused and not shown: Triton's metrics endpoint takes no credentials")
		}
	}
	names := map[string]bool{}
	for _, h := range f.Headers {
		if k, _, ok := strings.Cut(h, ":"); ok {
			names[strings.ToLower(strings.TrimSpace(k))] = true
		}
	}
	for _, list := range f.Secrets.RecordHeaders {
		for n := range strings.SplitSeq(list, ",") {
			n = strings.TrimSpace(n)
			if !names[strings.ToLower(n)] {
				return fmt.Errorf("--record-headers %s: no -H gives a header of that name", textsafe.Quote(n))
			}
		}
	}
	return nil
}

// checkHeaders checks the -H flags' syntax. An error names the header by
// its position and name only: its value may be a credential, and an
// argument without a colon may be nothing but one.
func checkHeaders(headers []string, protocol string) error {
	for i, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok || k == "":
			return fmt.Errorf("bad header for -H (number %d, not shown): use KEY:VALUE", i+1)
		case !httpguts.ValidHeaderFieldName(k):
			return fmt.Errorf("bad header for -H (number %d): the name %s has characters a header name cannot have", i+1, safeName(k))
		case !httpguts.ValidHeaderFieldValue(v):
			return fmt.Errorf("bad header %s for -H: its value (not shown) has characters a header value cannot have (control characters)", safeName(k))
		case protocol == "grpc" && !validGRPCKey(k):
			return fmt.Errorf("bad header %s for -H: gRPC metadata names are letters, digits, '-', '_' and '.', and grpc- names are gRPC's own", safeName(k))
		}
	}
	return nil
}

// safeName quotes a header name for an error message, cut to 64 bytes: a
// name is not a secret, but one typed wrongly may hold one.
func safeName(k string) string {
	if len(k) > 64 {
		k = k[:64] + "…"
	}
	return fmt.Sprintf("%q", k)
}
