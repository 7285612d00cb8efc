package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tritontop/tritontop/capture"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/internal/usage"
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

// runCapture is `tritontop capture`: capture.Run until Ctrl-C or SIGTERM,
// its error one line with the exit code it calls for.
func runCapture(args []string, stdout, stderr io.Writer) int {
	c, code, done := parseCaptureFlags(args, stdout, stderr)
	if done {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := capture.Run(ctx, c, stdout); err != nil {
		fmt.Fprintf(stderr, "tritontop capture: %s\n", oneLine(err.Error()))
		if usage.Is(err) {
			return exitUsage
		}
		return exitFail
	}
	return exitOK
}

// parseCaptureFlags parses capture's command line; done says the command
// is over (help, or a bad command line), with its exit code. What the
// settings mean, and whether they can be used, capture.Run checks.
func parseCaptureFlags(args []string, stdout, stderr io.Writer) (c capture.Config, code int, done bool) {
	fs := flag.NewFlagSet("tritontop capture", flag.ContinueOnError)
	fs.StringVar(&c.Listen, "listen", capture.DefaultListen, "address the proxy listens on (clients connect here)")
	fs.StringVar(&c.Upstream, "upstream", "", "the Triton server's address, HOST:PORT (required)")
	fs.StringVar(&c.Out, "o", "", "write the trace to FILE (required; refuses an existing file)")
	fs.BoolVar(&c.HTTP, "http", false, "proxy Triton's HTTP/REST endpoint instead of gRPC")
	fs.BoolVar(&c.Tensors, "with-tensors", false, "write the input tensors' contents too (they may be private: off by default)")
	fs.Usage = func() {
		fmt.Fprint(stdout, captureUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	quietFlags(fs, stdout)
	if err := fs.Parse(args); err != nil {
		return c, flagExit("tritontop capture", err, stderr), true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tritontop capture: unexpected argument %s (see tritontop capture -h)\n", textsafe.Quote(fs.Arg(0)))
		return c, exitUsage, true
	}
	return c, exitOK, false
}
