package triton

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// DefaultConnectTimeout bounds how long Dial waits for the server to answer.
const DefaultConnectTimeout = 5 * time.Second

// Options configures Dial. The zero value dials gRPC over one plaintext
// connection.
type Options struct {
	// Protocol is "grpc" or "http"; empty means the URL's scheme decides,
	// and gRPC when the URL has none.
	Protocol string
	// Connections is the number of gRPC connections requests are spread
	// over, or the HTTP client's connection limit per host; 0 means 1 for
	// gRPC and no limit for HTTP.
	Connections int
	// Headers are sent with every request: gRPC metadata or HTTP headers,
	// like perf_analyzer -H.
	Headers map[string]string
	// TLS turns on TLS; an https:// URL turns it on with defaults.
	TLS *TLSOptions
	// ConnectTimeout bounds Dial's reachability check; 0 means
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Endpoint is where an HTTP client's inference requests go: KServe's
	// infer (empty means it), or a text endpoint for an LLM. Over gRPC
	// only infer exists.
	Endpoint Endpoint
	// EndpointURL is the server of a text endpoint when it is not the
	// client's (Triton's OpenAI-compatible frontend listens on its own
	// port), scheme://host:port; empty means the client's server.
	EndpointURL string
	// Stream makes the OpenAI endpoints' requests stream ("stream": true).
	Stream bool
}

// TLSOptions configures TLS towards the server.
type TLSOptions struct {
	// CAFile is a PEM bundle of roots to trust instead of the system's.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and key for mutual
	// TLS; both or neither.
	CertFile, KeyFile string
	// ServerName overrides the name checked against the server certificate.
	ServerName string
	// InsecureSkipVerify accepts any server certificate.
	InsecureSkipVerify bool
}

// Dial connects to a Triton server and checks that it answers within
// opts.ConnectTimeout (gRPC: ServerLive; HTTP: GET /v2/health/live). A
// server that answers "not live" is still reachable and is returned. The
// url is host:port, grpc://host:port, http://host:port or https://host:port.
func Dial(ctx context.Context, url string, opts Options) (Client, error) {
	ep, err := parseEndpoint(url, opts.Protocol)
	if err != nil {
		return nil, err
	}
	if opts.TLS != nil {
		ep.tls = true
	}
	if opts.Connections < 0 {
		return nil, fmt.Errorf("connections must be at least 1, got %d", opts.Connections)
	}
	timeout := opts.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	var tlsConf *tls.Config
	if ep.tls {
		if tlsConf, err = buildTLS(opts.TLS); err != nil {
			return nil, err
		}
	}
	if opts.Endpoint.Text() && ep.protocol != ProtocolHTTP {
		return nil, fmt.Errorf("endpoint %s is HTTP only: use the http protocol", opts.Endpoint)
	}
	var c Client
	if ep.protocol == ProtocolHTTP {
		c, err = newHTTPClient(ep, opts, tlsConf)
	} else {
		c, err = newGRPCClient(ep, opts, tlsConf)
	}
	if err != nil {
		return nil, err
	}
	if err := checkReachable(ctx, c, ep, tlsConf, timeout); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkReachable turns the many ways a first call can fail into one line
// that names the address, the protocol and the likely fix. With TLS on
// (tlsConf not nil), a handshake problem gets its own line.
func checkReachable(ctx context.Context, c Client, ep endpoint, tlsConf *tls.Config, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	proto := "gRPC"
	if ep.protocol == ProtocolHTTP {
		proto = "HTTP"
	}
	fail := func(reason string) error {
		return fmt.Errorf("cannot reach Triton at %s over %s within %s: %s (is the server running? check -u)",
			ep.addr, proto, timeout, reason)
	}
	// A plain TCP dial first gives a short, exact reason ("connection
	// refused") instead of a transport error several wrappers deep.
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", ep.addr)
	if err != nil {
		return fail(dialReason(err))
	}
	if tlsConf != nil {
		if err := checkTLS(ctx, conn, tlsConf, ep); err != nil {
			if ctx.Err() != nil {
				return fail("no answer to the TLS handshake (timed out)")
			}
			return err
		}
	} else {
		conn.Close()
	}
	_, err = c.ServerLive(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fail("no answer (timed out)")
	}
	var te *Error
	if errors.As(err, &te) && te.HTTPStatus != 0 {
		return fmt.Errorf("%s at %s answered HTTP %d to GET /v2/health/live: %s (is this Triton's HTTP port? check -u)",
			proto, ep.addr, te.HTTPStatus, oneLine(te.Message))
	}
	if tlsConf == nil && speaksTLS(ctx, ep.addr) {
		return fmt.Errorf("Triton at %s serves TLS on this port: turn TLS on (--ssl with --ssl-ca CA, or a grpcs:// or https:// URL)", ep.addr)
	}
	if tlsConf == nil {
		switch other := sniffProtocol(ctx, ep.addr); {
		case ep.protocol == ProtocolGRPC && other == ProtocolHTTP:
			return fmt.Errorf("%s looks like an HTTP server, not gRPC: check -i and the port (Triton serves HTTP on %d, gRPC on %d)",
				ep.addr, DefaultHTTPPort, DefaultGRPCPort)
		case ep.protocol == ProtocolHTTP && other == ProtocolGRPC:
			return fmt.Errorf("%s looks like a gRPC server, not HTTP: check -i and the port (Triton serves HTTP on %d, gRPC on %d)",
				ep.addr, DefaultHTTPPort, DefaultGRPCPort)
		}
	}
	return fail(oneLine(err.Error()))
}

// sniffProtocol asks addr what it speaks: an HTTP/1.1 server answers a
// request line with "HTTP/1.x", an HTTP/2 (gRPC) server opens with a
// SETTINGS frame. It returns ProtocolHTTP, ProtocolGRPC or "" when unsure.
func sniffProtocol(ctx context.Context, addr string) string {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return ""
	}
	defer conn.Close()
	deadline := time.Now().Add(time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	if _, err := io.WriteString(conn, "GET /v2/health/live HTTP/1.1\r\nHost: triton\r\n\r\n"); err != nil {
		return ""
	}
	var buf [16]byte
	n, _ := io.ReadAtLeast(conn, buf[:], 9)
	switch {
	case n >= 5 && string(buf[:5]) == "HTTP/":
		return ProtocolHTTP
	case n >= 9 && buf[3] == 0x04: // an HTTP/2 frame of type SETTINGS
		return ProtocolGRPC
	}
	return ""
}

// dialReason reduces a dial error to its cause: "connection refused",
// "no such host", "timed out".
func dialReason(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "unknown host " + dnsErr.Name
	}
	if errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
		return "no answer (timed out)"
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "connection refused"
	}
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return OutOfFiles()
	}
	var sysErr *os.SyscallError
	if errors.As(err, &sysErr) {
		return sysErr.Err.Error()
	}
	return oneLine(err.Error())
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func buildTLS(o *TLSOptions) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if o == nil {
		return conf, nil
	}
	conf.ServerName = o.ServerName
	conf.InsecureSkipVerify = o.InsecureSkipVerify
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s holds no PEM certificate", o.CAFile)
		}
		conf.RootCAs = pool
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, fmt.Errorf("TLS client certificate needs both a cert file and a key file")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load TLS client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// OutOfFiles says that tritontop, not the server, ran out of file
// descriptors, with the process's limit: a client-side limit, raised with
// ulimit -n.
func OutOfFiles() string {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil {
		return fmt.Sprintf("tritontop is out of file descriptors (ulimit -n is %d): a limit of this client, not of the server; raise it with ulimit -n or use fewer connections", rl.Cur)
	}
	return "tritontop is out of file descriptors: a limit of this client, not of the server; raise it with ulimit -n or use fewer connections"
}
