package triton

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func TestDialUnreachableIsOneQuickLine(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	for _, proto := range []string{"grpc", "http"} {
		start := time.Now()
		_, err := Dial(context.Background(), addr, Options{Protocol: proto, ConnectTimeout: 3 * time.Second})
		took := time.Since(start)
		name := map[string]string{"grpc": "gRPC", "http": "HTTP"}[proto]
		want := fmt.Sprintf("cannot reach Triton at %s over %s within 3s: connection refused (is the server running? check -u)", addr, name)
		if err == nil || err.Error() != want {
			t.Errorf("%s: Dial error = %v; want %q", proto, err, want)
		}
		if took > 2*time.Second {
			t.Errorf("%s: refused connection took %v to report", proto, took)
		}
	}
}

func TestDialTimesOutOnSilentServer(t *testing.T) {
	// A listener that accepts but never speaks HTTP/2 or HTTP.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, err = Dial(context.Background(), lis.Addr().String(), Options{ConnectTimeout: 300 * time.Millisecond})
	if err == nil || !strings.HasPrefix(err.Error(), "cannot reach Triton at "+lis.Addr().String()+" over gRPC within 300ms: ") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("Dial error = %v", err)
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		url, protocol string
		want          endpoint
		err           string
	}{
		{"localhost:8001", "", endpoint{"grpc", "localhost:8001", false}, ""},
		{"localhost", "", endpoint{"grpc", "localhost:8001", false}, ""},
		{"localhost", "http", endpoint{"http", "localhost:8000", false}, ""},
		{"grpc://10.0.0.1:9001", "", endpoint{"grpc", "10.0.0.1:9001", false}, ""},
		{"http://h:8000/", "", endpoint{"http", "h:8000", false}, ""},
		{"https://h", "", endpoint{"http", "h:8000", true}, ""},
		{"HTTP://h:1", "http", endpoint{"http", "h:1", false}, ""},
		{"[::1]:8001", "", endpoint{"grpc", "[::1]:8001", false}, ""},
		{"http://h:1", "grpc", endpoint{}, "says http but the protocol is grpc"},
		{"ftp://h:1", "", endpoint{}, "unknown scheme"},
		{"h:99999", "", endpoint{}, "bad port"},
		{"h:1", "udp", endpoint{}, "unknown protocol"},
		{"", "", endpoint{}, "empty server URL"},
	}
	for _, tt := range tests {
		got, err := parseEndpoint(tt.url, tt.protocol)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseEndpoint(%q, %q) error = %v; want %q", tt.url, tt.protocol, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseEndpoint(%q, %q) = %+v, %v; want %+v", tt.url, tt.protocol, got, err, tt.want)
		}
	}
}

func TestMetricsURL(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:8001":          "http://localhost:8002/metrics",
		"grpc://10.1.2.3:9001":    "http://10.1.2.3:8002/metrics",
		"https://triton.example":  "http://triton.example:8002/metrics",
		"http://[::1]:8000/":      "http://[::1]:8002/metrics",
		"http://triton:8000/path": "http://triton:8002/metrics",
	} {
		if got := MetricsURL(in); got != want {
			t.Errorf("MetricsURL(%q) = %q; want %q", in, got, want)
		}
	}
}
