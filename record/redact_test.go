package record

import (
	"reflect"
	"strings"
	"testing"
)

func TestRedactArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"authorization header, separate value",
			[]string{"-H", "Authorization: Bearer abc"}, []string{"-H", "Authorization: REDACTED"}},
		{"header with = and no space",
			[]string{"--header=authorization:Basic dXNlcjpwYXNz"}, []string{"--header=authorization:REDACTED"}},
		{"token header",
			[]string{"-H", "X-Api-Token:t0k3n"}, []string{"-H", "X-Api-Token:REDACTED"}},
		{"api key header",
			[]string{"--header", "x-api-key: k"}, []string{"--header", "x-api-key: REDACTED"}},
		{"secret and password headers",
			[]string{"-H", "Client-Secret: s", "-H=X-Password: p"}, []string{"-H", "Client-Secret: REDACTED", "-H=X-Password: REDACTED"}},
		{"bearer value under an innocent name",
			[]string{"-H", "X-Forward: Bearer abc"}, []string{"-H", "X-Forward: REDACTED"}},
		{"any header's value is redacted",
			[]string{"-H", "X-Request-Id: 42"}, []string{"-H", "X-Request-Id: REDACTED"}},
		{"a header --record-headers names is kept",
			[]string{"-H", "X-Request-Id: 42", "--record-headers", "x-request-id"}, []string{"-H", "X-Request-Id: 42", "--record-headers", "x-request-id"}},
		{"--record-headers keeps only the names it lists",
			[]string{"--record-headers=X-Trace,X-Zone", "-H", "X-Jwt: eyJabc", "-H", "X-Zone: eu"},
			[]string{"--record-headers=X-Trace,X-Zone", "-H", "X-Jwt: REDACTED", "-H", "X-Zone: eu"}},
		{"JWT under a name with no secret word",
			[]string{"-H", "X-Jwt: eyJhbGciOi.abc"}, []string{"-H", "X-Jwt: REDACTED"}},
		{"header name starting with -",
			[]string{"-H", "-Weird: abc"}, []string{"-H", "-Weird: REDACTED"}},
		{"header with no colon is all value",
			[]string{"-H", "Bearer abc"}, []string{"-H", "REDACTED"}},
		{"header after --header=",
			[]string{"--header=X-Custom:abc"}, []string{"--header=X-Custom:REDACTED"}},
		{"TLS private key paths",
			[]string{"--ssl-grpc-private-key-file", "/etc/tls/client.key", "--ssl-https-private-key-file=/k.pem"},
			[]string{"--ssl-grpc-private-key-file", "REDACTED", "--ssl-https-private-key-file=REDACTED"}},
		{"certificates are not secrets",
			[]string{"--ssl-grpc-root-certifications-file", "/etc/tls/ca.pem"},
			[]string{"--ssl-grpc-root-certifications-file", "/etc/tls/ca.pem"}},
		{"token flag",
			[]string{"--token", "xyz", "-m", "resnet50"}, []string{"--token", "REDACTED", "-m", "resnet50"}},
		{"secret flag followed by another flag has no value to hide",
			[]string{"--use-api-key", "-m", "resnet50"}, []string{"--use-api-key", "-m", "resnet50"}},
		{"URL password",
			[]string{"-u", "https://user:pw@triton:8000"}, []string{"-u", "https://user:REDACTED@triton:8000"}},
		{"URL password in flag=value",
			[]string{"-u=https://user:pw@triton:8000"}, []string{"-u=https://user:REDACTED@triton:8000"}},
		{"ordinary arguments untouched",
			[]string{"-m", "resnet50", "-u", "127.0.0.1:8001", "-i", "grpc", "--concurrency-range", "1:8", "-"},
			[]string{"-m", "resnet50", "-u", "127.0.0.1:8001", "-i", "grpc", "--concurrency-range", "1:8", "-"}},
		{"dangling -H", []string{"-H"}, []string{"-H"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]string(nil), tc.in...)
			got := RedactArgs(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("RedactArgs(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if !reflect.DeepEqual(tc.in, in) {
				t.Error("RedactArgs modified its argument")
			}
			for _, secret := range []string{"abc", "dXNlcjpwYXNz", "t0k3n", "client.key", ":pw@", "xyz"} {
				if strings.Contains(strings.Join(got, " "), secret) {
					t.Errorf("%q survived redaction: %q", secret, got)
				}
			}
		})
	}
}
