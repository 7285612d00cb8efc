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
	"syscall"
	"time"
)

// How long checkTLS waits, after a TLS 1.3 handshake, for a server that
// asked for a client certificate to accept or refuse it. A gRPC server
// ends the wait early by speaking first. An HTTP server stays silent when
// it accepts, so its wait is always spent: short when a certificate was
// sent (the usual mutual TLS), longer when none was, where a refusal is
// the likely answer and a slow one should still be reported as such.
const (
	grpcVerdictWait       = 3 * time.Second
	httpVerdictWait       = 300 * time.Millisecond
	httpNoCertVerdictWait = time.Second
)

// checkTLS runs one TLS handshake with the server before the client's own
// connections do, so that a certificate problem is reported as one
// actionable line instead of surfacing inside the first RPC as "broken
// pipe". The raw connection is consumed.
//
// Under TLS 1.3 the client's handshake ends before the server has judged
// the client certificate; a refusal arrives only as an alert on the first
// read, and a client that writes first (as gRPC and HTTP do) often sees a
// broken pipe instead. So when the server asks for a certificate, checkTLS
// reads without writing: a gRPC server speaks first (its SETTINGS frame),
// and an HTTP server's silence for the verdict wait means it accepted.
func checkTLS(ctx context.Context, raw net.Conn, conf *tls.Config, ep endpoint) error {
	conf = conf.Clone()
	if conf.ServerName == "" {
		if host, _, err := net.SplitHostPort(ep.addr); err == nil {
			conf.ServerName = host
		}
	}
	if ep.protocol == ProtocolGRPC {
		conf.NextProtos = []string{"h2"}
	}
	asked := false
	certs := conf.Certificates
	conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		asked = true
		if len(certs) > 0 {
			return &certs[0], nil
		}
		return &tls.Certificate{}, nil
	}
	// refused says why a server that asked for a certificate hung up.
	refused := func(err error) error {
		if len(certs) == 0 {
			return fmt.Errorf("Triton at %s requires a client certificate (mutual TLS): give a client certificate and key signed by a CA the server trusts (--ssl-cert, --ssl-key)", ep.addr)
		}
		return fmt.Errorf("TLS with Triton at %s: the server refused the client certificate (%s): give one signed by a CA the server trusts (--ssl-cert, --ssl-key)",
			ep.addr, oneLine(err.Error()))
	}
	conn := tls.Client(raw, conf)
	defer conn.Close()
	if err := conn.HandshakeContext(ctx); err != nil {
		var opErr *net.OpError
		if asked && errors.As(err, &opErr) && opErr.Op == "remote error" {
			return refused(err)
		}
		return tlsFailure(ep.addr, err)
	}
	if !asked || conn.ConnectionState().Version < tls.VersionTLS13 {
		// Before TLS 1.3 the handshake itself carried the verdict.
		return nil
	}
	wait := grpcVerdictWait
	switch {
	case ep.protocol == ProtocolHTTP && len(certs) == 0:
		wait = httpNoCertVerdictWait
	case ep.protocol == ProtocolHTTP:
		wait = httpVerdictWait
	}
	deadline := time.Now().Add(wait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetReadDeadline(deadline)
	var b [1]byte
	if _, err := conn.Read(b[:]); err != nil && !os.IsTimeout(err) {
		return refused(err)
	}
	return nil
}

// tlsFailure names what went wrong in a TLS handshake and what to do.
func tlsFailure(addr string, err error) error {
	var (
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		notTLS     tls.RecordHeaderError
		verifyFail *tls.CertificateVerificationError
		opErr      *net.OpError
	)
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Errorf("TLS with Triton at %s: the server's certificate is signed by an unknown authority: give the CA that signed it (--ssl-ca)", addr)
	case errors.As(err, &hostname):
		return fmt.Errorf("TLS with Triton at %s: %v: connect by a name or address the certificate lists", addr, hostname)
	case errors.As(err, &invalid):
		return fmt.Errorf("TLS with Triton at %s: the server's certificate is not valid: %v", addr, invalid)
	case errors.As(err, &verifyFail):
		return fmt.Errorf("TLS with Triton at %s: cannot verify the server's certificate: %s", addr, oneLine(verifyFail.Err.Error()))
	case errors.As(err, &notTLS):
		return fmt.Errorf("TLS with Triton at %s: the server does not speak TLS on this port: drop TLS (--ssl, https://, grpcs://) or use its TLS port", addr)
	case errors.As(err, &opErr) && opErr.Op == "remote error":
		return fmt.Errorf("TLS with Triton at %s: the server refused the connection (%v): if it requires mutual TLS, give a client certificate signed by a CA it trusts", addr, err)
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("TLS with Triton at %s: the server closed the connection during the TLS handshake: check that the port serves TLS and that it accepts this client's certificate", addr)
	}
	return fmt.Errorf("TLS with Triton at %s: %s", addr, oneLine(err.Error()))
}

// speaksTLS reports whether the server at addr completes a TLS handshake,
// trusting any certificate: the likely reason a plaintext client fails.
func speaksTLS(ctx context.Context, addr string) bool {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	conf := &tls.Config{
		InsecureSkipVerify: true, // only asks whether TLS is spoken; nothing is sent
		NextProtos:         []string{"h2", "http/1.1"},
		// A server that wants a client certificate still speaks TLS.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &tls.Certificate{}, nil },
	}
	conn := tls.Client(raw, conf)
	defer conn.Close()
	return conn.HandshakeContext(ctx) == nil
}
