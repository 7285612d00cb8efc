package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tritontop/tritontop/capture"
	"github.com/tritontop/tritontop/trace"
)

const captureUsage = `Usage: tritontop capture --upstream HOST:8001 -o traffic.jsonl [--listen 127.0.0.1:8001] [--http] [--with-tensors]

A transparent proxy in front of Triton: clients connect to --listen instead of
the server, every call goes on to --upstream unchanged (unknown methods and
streams too), and each inference request is written to -o as a tritontop trace
(timestamps, model, version, inputs' names, datatypes, shapes and sizes,
parameters and sequence ids, bytes on the wire). Replay it with
tritontop --trace traffic.jsonl -u OTHER:8001 [--trace-speed 2].

The tensors themselves are written only with --with-tensors: they are the
users' data (images, prompts) and may be private, so a capture without them
can be shared. Stops on Ctrl-C (SIGINT) or SIGTERM.

Flags:
`

// captureOptions are tritontop capture's flags.
type captureOptions struct {
	listen, upstream, out string
	http, tensors         bool
}

func runCapture(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return captureUntil(ctx, args, stdout, stderr, nil)
}

// captureUntil runs the proxy until ctx is done; ready, when set, gets the
// address it listens on.
func captureUntil(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	o, code, done := parseCaptureFlags(args, stdout, stderr)
	if done {
		return code
	}
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "tritontop capture: %s\n", msg)
		return exitUsage
	}
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usage(fmt.Sprintf("cannot listen on %s: %v", o.listen, errors.Unwrap(err)))
	}
	defer l.Close()
	file, err := os.OpenFile(o.out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return usage(fmt.Sprintf("-o %s exists: a capture never overwrites one; give another name", o.out))
		}
		return usage(fmt.Sprintf("cannot create -o %s: %v", o.out, errors.Unwrap(err)))
	}
	protocol := "grpc"
	if o.http {
		protocol = "http"
	}
	w, err := trace.NewWriter(file, trace.Header{Source: capture.Source(l.Addr().String(), o.upstream, protocol), Tensors: o.tensors})
	if err != nil {
		file.Close()
		fmt.Fprintf(stderr, "tritontop capture: %v\n", err)
		return exitFail
	}
	px, err := newCaptureProxy(o.http, l, capture.Options{Upstream: o.upstream, Trace: w, Tensors: o.tensors})
	if err != nil {
		w.Close()
		return usage(err.Error())
	}
	fmt.Fprintf(stdout, "capturing %s traffic: %s -> %s, writing %s (tensors: %v)\n", protocol, l.Addr(), o.upstream, o.out, o.tensors)
	if ready != nil {
		ready(l.Addr().String())
	}
	return px.run(ctx, w, o.out, stdout, stderr)
}

// parseCaptureFlags parses capture's command line; done says the command
// is over (help, or a bad command line), with its exit code.
func parseCaptureFlags(args []string, stdout, stderr io.Writer) (o captureOptions, code int, done bool) {
	fs := flag.NewFlagSet("tritontop capture", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8001", "address the proxy listens on (clients connect here)")
	fs.StringVar(&o.upstream, "upstream", "", "the Triton server's address, HOST:PORT (required)")
	fs.StringVar(&o.out, "o", "", "write the trace to FILE (required; refuses an existing file)")
	fs.BoolVar(&o.http, "http", false, "proxy Triton's HTTP/REST endpoint instead of gRPC")
	fs.BoolVar(&o.tensors, "with-tensors", false, "write the input tensors' contents too (they may be private: off by default)")
	fs.Usage = func() {
		fmt.Fprint(stdout, captureUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	quietFlags(fs, stdout)
	if err := fs.Parse(args); err != nil {
		return o, flagExit("tritontop capture", err, stderr), true
	}
	usage := func(msg string) (captureOptions, int, bool) {
		fmt.Fprintf(stderr, "tritontop capture: %s\n", msg)
		return o, exitUsage, true
	}
	switch {
	case fs.NArg() > 0:
		return usage(fmt.Sprintf("unexpected argument %q (see tritontop capture -h)", fs.Arg(0)))
	case o.upstream == "":
		return usage("no --upstream: give the Triton server's address, e.g. --upstream triton:8001")
	case o.out == "":
		return usage("no -o FILE: say where to write the trace")
	}
	return o, exitOK, false
}

// captureProxy is a capture's proxy: how it serves, stops, and counts.
type captureProxy struct {
	serve    func() error
	shutdown func()
	stats    func() capture.Stats
}

// newCaptureProxy makes the proxy of Triton's HTTP endpoint (useHTTP) or its
// gRPC service, serving on l.
func newCaptureProxy(useHTTP bool, l net.Listener, opts capture.Options) (captureProxy, error) {
	if !useHTTP {
		p, err := capture.NewGRPCProxy(opts)
		if err != nil {
			return captureProxy{}, err
		}
		return captureProxy{serve: func() error { return p.Serve(l) }, shutdown: p.Stop, stats: p.Stats}, nil
	}
	p, err := capture.NewHTTPProxy(opts)
	if err != nil {
		return captureProxy{}, err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	shutdown := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}
	return captureProxy{serve: func() error { return srv.Serve(l) }, shutdown: shutdown, stats: p.Stats}, nil
}

// run serves until ctx ends or the proxy stops, flushing the trace every
// second so that a killed capture loses at most that, then closes the
// trace and says what it holds.
func (px captureProxy) run(ctx context.Context, w *trace.Writer, out string, stdout, stderr io.Writer) int {
	served := make(chan error, 1)
	go func() { served <- px.serve() }()
	tick := time.NewTicker(time.Second)
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
				fmt.Fprintf(stderr, "tritontop capture: %v\n", err)
				px.shutdown()
				return exitFail
			}
		}
	}
	px.shutdown()
	st := px.stats()
	if err := w.Close(); err != nil {
		fmt.Fprintf(stderr, "tritontop capture: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "%d calls forwarded, %d inference requests written to %s", st.Calls, st.Recorded, out)
	if st.Errors > 0 {
		fmt.Fprintf(stdout, " (%d forwarded but not parsable, not written)", st.Errors)
	}
	fmt.Fprintln(stdout)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "tritontop capture: %v\n", serveErr)
		return exitFail
	}
	return exitOK
}
