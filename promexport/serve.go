package promexport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// MetricsPath is where Serve answers scrapes, Prometheus' default path.
const MetricsPath = "/metrics"

// shutdownGrace bounds how long Close waits for scrapes in progress.
const shutdownGrace = 2 * time.Second

// Server is the HTTP endpoint started by Serve.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	err  error // set before done is closed
}

// Serve listens on addr (host:port; ":9099" for every interface, port 0
// for a free one) and serves the Exporter at MetricsPath until ctx ends or
// Close is called. It returns once the address is bound, so that a port in
// use is reported before the run starts.
func (e *Exporter) Serve(ctx context.Context, addr string) (*Server, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot serve Prometheus metrics on %s (change --prometheus-addr): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, e.Handler())
	s := &Server{
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return ctx },
		},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.err = err
		close(s.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// Addr is the address the endpoint listens on (the port chosen for port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops accepting scrapes, lets those in progress finish for up to
// two seconds, and returns the error that ended serving, if any. It is safe
// to call more than once and from any goroutine.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return s.err
}
