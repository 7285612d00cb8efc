package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/trace"
)

// DefaultListen is where a capture listens unless told otherwise: Triton's
// own gRPC port, on loopback.
const DefaultListen = "127.0.0.1:8001"

// flushEvery is how often a capture flushes its trace: a killed capture
// loses at most this much of it.
const flushEvery = time.Second

// Config is one capture's settings (tritontop capture's flags). Errors
// about a setting name its flag.
type Config struct {
	// Listen is the address the proxy listens on, where clients connect
	// instead of the server (empty: DefaultListen; port 0: a free port,
	// which Ready tells).
	Listen string
	// Upstream is the Triton server's address, HOST:PORT.
	Upstream string
	// Out is the trace file to write. It must not exist: a capture never
	// overwrites one. It is created with mode 0600, as it may hold the
	// users' data.
	Out string
	// HTTP proxies Triton's HTTP/REST endpoint instead of its gRPC service.
	HTTP bool
	// Tensors writes the input tensors' contents too (they may be private).
	Tensors bool
	// Ready, when set, is called with the address the proxy listens on
	// once it does, before it serves.
	Ready func(addr string)
}

// Run captures until ctx ends or the proxy stops: it listens on c.Listen,
// forwards every call to c.Upstream unchanged and writes each inference
// request to c.Out as a trace, flushed every second. At the end it closes
// the trace and says on stdout what it holds. Settings and files it cannot
// use are usage.Error; anything else is a failed capture.
func Run(ctx context.Context, c Config, stdout io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	l, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return usage.Errorf("cannot listen on %s: %v", c.Listen, cause(err))
	}
	defer l.Close()
	file, err := createTrace(c.Out)
	if err != nil {
		return err
	}
	w, err := trace.NewWriter(file, trace.Header{Source: Source(l.Addr().String(), c.Upstream, c.protocol()), Tensors: c.Tensors})
	if err != nil {
		file.Close()
		return fmt.Errorf("-o %s: %w", c.Out, err)
	}
	px, err := newServing(c.HTTP, l, Options{Upstream: c.Upstream, Trace: w, Tensors: c.Tensors})
	if err != nil {
		w.Close()
		return usage.Error{Err: err}
	}
	fmt.Fprintf(stdout, "capturing %s traffic: %s -> %s, writing %s (tensors: %v)\n", c.protocol(), l.Addr(), c.Upstream, c.Out, c.Tensors)
	if c.Ready != nil {
		c.Ready(l.Addr().String())
	}
	return px.run(ctx, w, c.Out, stdout)
}

// check refuses settings a capture cannot start with, before it listens.
func (c *Config) check() error {
	switch {
	case c.Upstream == "":
		return usage.Errorf("no --upstream: give the Triton server's address, e.g. --upstream triton:8001")
	case c.Out == "":
		return usage.Errorf("no -o FILE: say where to write the trace")
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if err := outfile.CheckPath("-o", c.Out); err != nil {
		return usage.Error{Err: err}
	}
	return nil
}

func (c *Config) protocol() string {
	if c.HTTP {
		return "http"
	}
	return "grpc"
}

// createTrace creates the trace file, new and readable by its owner alone.
func createTrace(path string) (*os.File, error) {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, os.ErrExist):
		return nil, usage.Errorf("-o %s exists: a capture never overwrites one; give another name", path)
	case err != nil:
		return nil, usage.Errorf("cannot create -o %s: %v", path, cause(err))
	}
	return file, nil
}

// cause is err without the operation and address it repeats (those of a
// *net.OpError or an *os.PathError), or err itself.
func cause(err error) error {
	if inner := errors.Unwrap(err); inner != nil {
		return inner
	}
	return err
}

// serving is a capture's proxy: how it serves, stops, and counts.
type serving struct {
	serve    func() error
	shutdown func()
	stats    func() Stats
}

// newServing makes the proxy of Triton's HTTP endpoint (useHTTP) or its
// gRPC service, serving on l.
func newServing(useHTTP bool, l net.Listener, opts Options) (serving, error) {
	if !useHTTP {
		p, err := NewGRPCProxy(opts)
		if err != nil {
			return serving{}, err
		}
		return serving{serve: func() error { return p.Serve(l) }, shutdown: p.Stop, stats: p.Stats}, nil
	}
	p, err := NewHTTPProxy(opts)
	if err != nil {
		return serving{}, err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	shutdown := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}
	return serving{serve: func() error { return srv.Serve(l) }, shutdown: shutdown, stats: p.Stats}, nil
}

// run serves until ctx ends or the proxy stops, flushing the trace every
// second so that a killed capture loses at most that, then closes the
// trace and says what it holds.
func (px serving) run(ctx context.Context, w *trace.Writer, out string, stdout io.Writer) error {
	served := make(chan error, 1)
	go func() { served <- px.serve() }()
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case serveErr = <-served:
			break loop
		case <-tick.C:
			if err := w.Flush(); err != nil {
				px.shutdown()
				w.Close()
				return fmt.Errorf("-o %s: %w", out, err)
			}
		}
	}
	px.shutdown()
	st := px.stats()
	if err := w.Close(); err != nil {
		return fmt.Errorf("-o %s: %w", out, err)
	}
	fmt.Fprintf(stdout, "%d calls forwarded, %d inference requests written to %s", st.Calls, st.Recorded, out)
	if st.Errors > 0 {
		fmt.Fprintf(stdout, " (%d forwarded but not parsable, not written)", st.Errors)
	}
	fmt.Fprintln(stdout)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("the proxy stopped: %w", serveErr)
	}
	return nil
}
