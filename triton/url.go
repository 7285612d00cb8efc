package triton

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// Triton's default ports (--http-port, --grpc-port, --metrics-port).
const (
	DefaultHTTPPort    = 8000
	DefaultGRPCPort    = 8001
	DefaultMetricsPort = 8002
)

// Protocol names accepted in Options.Protocol.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http"
)

// endpoint is a parsed server URL.
type endpoint struct {
	protocol string // ProtocolGRPC or ProtocolHTTP
	addr     string // host:port
	tls      bool
}

// ErrUserInfo refuses a server URL with user information
// (user:password@host). The URL is not quoted: its password would be.
var ErrUserInfo = errors.New("server URL has user information (user:password@host), refused and not shown: send credentials as a header (-H 'Authorization: ...'), whose value is never printed or recorded")

// HasUserInfo reports whether a URL (with or without a scheme) has user
// information before its host: an '@' before the first '/', '?' or '#'
// after the scheme.
func HasUserInfo(raw string) bool {
	s := raw
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	return strings.Contains(s, "@")
}

// parseEndpoint reads a server URL of the form host[:port],
// grpc://host[:port], http://host[:port] or https://host[:port]. A scheme
// fixes the protocol; without one, protocol (or gRPC when empty) applies. A
// missing port becomes the protocol's default port.
func parseEndpoint(raw, protocol string) (endpoint, error) {
	protocol = strings.ToLower(strings.TrimSpace(protocol))
	switch protocol {
	case "", ProtocolGRPC, ProtocolHTTP:
	default:
		return endpoint{}, fmt.Errorf("unknown protocol %s: use grpc or http", textsafe.Quote(protocol))
	}
	s := strings.TrimSpace(raw)
	if s == "" {
		return endpoint{}, fmt.Errorf("empty server URL: give host:port, grpc://host:port or http://host:port")
	}
	if HasUserInfo(s) {
		return endpoint{}, ErrUserInfo
	}
	var ep endpoint
	if i := strings.Index(s, "://"); i >= 0 {
		scheme := strings.ToLower(s[:i])
		s = s[i+3:]
		switch scheme {
		case "grpc":
			ep.protocol = ProtocolGRPC
		case "grpcs":
			ep.protocol, ep.tls = ProtocolGRPC, true
		case "http":
			ep.protocol = ProtocolHTTP
		case "https":
			ep.protocol, ep.tls = ProtocolHTTP, true
		default:
			return endpoint{}, fmt.Errorf("server URL %s: unknown scheme %s, use grpc://, http:// or https://", textsafe.Quote(raw), textsafe.Quote(scheme))
		}
		if protocol != "" && protocol != ep.protocol {
			return endpoint{}, fmt.Errorf("server URL %s says %s but the protocol is %s: drop the scheme or the protocol option", textsafe.Quote(raw), ep.protocol, protocol)
		}
	} else {
		ep.protocol = protocol
		if ep.protocol == "" {
			ep.protocol = ProtocolGRPC
		}
	}
	// A trailing path ("http://h:8000/") carries nothing Triton needs.
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	host, port, err := splitHostPort(s)
	if err != nil {
		return endpoint{}, fmt.Errorf("server URL %s: %w", textsafe.Quote(raw), err)
	}
	if port == "" {
		port = strconv.Itoa(defaultPort(ep.protocol))
	}
	if host == "" {
		host = "localhost"
	}
	ep.addr = net.JoinHostPort(host, port)
	return ep, nil
}

// splitHostPort splits host[:port], accepting a bare host and bracketed
// IPv6 literals; the port, when present, must be a number in 1..65535.
func splitHostPort(s string) (host, port string, err error) {
	if s == "" {
		return "", "", fmt.Errorf("missing host")
	}
	hasPort := strings.LastIndexByte(s, ':') > strings.LastIndexByte(s, ']')
	if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
		// A bare IPv6 literal has no port.
		return s, "", nil
	}
	if !hasPort {
		return strings.Trim(s, "[]"), "", nil
	}
	host, port, err = net.SplitHostPort(s)
	if err != nil {
		return "", "", fmt.Errorf("bad host:port: %w", err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("bad port %s: want a number from 1 to 65535", textsafe.Quote(port))
	}
	return host, port, nil
}

func defaultPort(protocol string) int {
	if protocol == ProtocolHTTP {
		return DefaultHTTPPort
	}
	return DefaultGRPCPort
}

// MetricsURL returns the URL of Triton's Prometheus endpoint for a server
// URL: the same host on DefaultMetricsPort, path /metrics, over plain HTTP
// (Triton's metrics listener has no TLS). A server URL that cannot be
// parsed gives the local default.
func MetricsURL(serverURL string) string {
	host := "localhost"
	if ep, err := parseEndpoint(serverURL, ""); err == nil {
		if h, _, err := net.SplitHostPort(ep.addr); err == nil && h != "" {
			host = h
		}
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(DefaultMetricsPort)) + "/metrics"
}

// CheckServerURL reports what is wrong with a server URL before any
// connection is tried: a bad or missing port, a scheme that contradicts the
// protocol, a path (Triton's API paths are the client's to choose).
func CheckServerURL(raw, protocol string) error {
	if _, err := parseEndpoint(raw, protocol); err != nil {
		return err
	}
	s := raw
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexByte(s, '/'); i >= 0 && strings.Trim(s[i:], "/") != "" {
		return fmt.Errorf("server URL %s has a path %s: give the server only, host:port (the client picks Triton's paths)", textsafe.Quote(raw), textsafe.Quote(s[i:]))
	}
	return nil
}
