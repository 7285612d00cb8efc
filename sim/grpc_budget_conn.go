package sim

import (
	"context"
	"net"

	"google.golang.org/grpc/credentials"
)

// budgetCreds wraps the server's transport credentials (nil: plaintext) so
// that every connection, once its handshake is done, is read through a
// budgetConn.
type budgetCreds struct {
	credentials.TransportCredentials
	g *grpcBudget
}

// insecureInfo is the AuthInfo of a plaintext connection.
type insecureInfo struct{ credentials.CommonAuthInfo }

func (insecureInfo) AuthType() string { return "insecure" }

// ServerHandshake implements credentials.TransportCredentials.
func (c *budgetCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info := raw, credentials.AuthInfo(insecureInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}})
	if c.TransportCredentials != nil {
		var err error
		if conn, info, err = c.TransportCredentials.ServerHandshake(raw); err != nil {
			return nil, nil, err
		}
	}
	return newBudgetConn(conn, c.g), info, nil
}

// Info implements credentials.TransportCredentials.
func (c *budgetCreds) Info() credentials.ProtocolInfo {
	if c.TransportCredentials != nil {
		return c.TransportCredentials.Info()
	}
	return credentials.ProtocolInfo{SecurityProtocol: "insecure"}
}

// Clone implements credentials.TransportCredentials.
func (c *budgetCreds) Clone() credentials.TransportCredentials {
	d := *c
	if c.TransportCredentials != nil {
		d.TransportCredentials = c.TransportCredentials.Clone()
	}
	return &d
}

// ClientHandshake implements credentials.TransportCredentials; a server
// never calls it.
func (c *budgetCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if c.TransportCredentials != nil {
		return c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	}
	return raw, insecureInfo{}, nil
}

// OverrideServerName implements credentials.TransportCredentials.
//
// Deprecated: as in grpc-go.
func (c *budgetCreds) OverrideServerName(name string) error {
	if c.TransportCredentials != nil {
		return c.TransportCredentials.OverrideServerName(name) //nolint:staticcheck // forwarded
	}
	return nil
}

// budgetAddr is a budgetConn's remote address: the server puts it in every
// call's peer, which is how the tap finds the connection's frameScan.
type budgetAddr struct {
	net.Addr
	conn *budgetConn
}

// bufSize is a budgetConn's read buffer, the size of grpc-go's own.
const bufSize = 32 << 10

// budgetConn reads a connection for the server through its own buffer and
// follows what it hands over (frameScan). The server reads a frame's header
// and then its payload, so each Read is one frame's bytes at most.
type budgetConn struct {
	net.Conn
	addr *budgetAddr
	scan *frameScan
	buf  []byte
	r, w int
	err  error // a read error held until the buffer is drained
}

func newBudgetConn(c net.Conn, g *grpcBudget) *budgetConn {
	bc := &budgetConn{Conn: c, scan: newFrameScan(g), buf: make([]byte, bufSize)}
	bc.addr = &budgetAddr{Addr: c.RemoteAddr(), conn: bc}
	return bc
}

// RemoteAddr implements net.Conn.
func (c *budgetConn) RemoteAddr() net.Addr { return c.addr }

// Read implements net.Conn: it hands over what it has, and follows it.
// The server reads a connection until it fails: then every call still
// followed has its hold closed.
func (c *budgetConn) Read(p []byte) (int, error) {
	n, err := c.fill(p)
	c.scan.scan(p[:n])
	if err != nil && n == 0 {
		c.scan.closeAll()
	}
	return n, err
}

// fill copies buffered bytes into p, reading the connection when there are
// none (straight into p when p is as large as the buffer).
func (c *budgetConn) fill(p []byte) (int, error) {
	if c.r == c.w {
		if c.err != nil {
			err := c.err
			c.err = nil
			return 0, err
		}
		if len(p) >= len(c.buf) {
			return c.Conn.Read(p)
		}
		n, err := c.Conn.Read(c.buf)
		c.r, c.w = 0, n
		if n == 0 {
			return 0, err
		}
		c.err = err // once the buffer is drained
	}
	n := copy(p, c.buf[c.r:c.w])
	c.r += n
	return n, nil
}
