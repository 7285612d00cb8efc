package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tritontop/tritontop/session"
)

// sigquitDumpEnv, when set to anything, gives SIGQUIT back to the Go
// runtime: the process prints every goroutine's stack and exits, for
// debugging a hang. Unset, SIGQUIT (Ctrl-\) ends a run like Ctrl-C.
const sigquitDumpEnv = "TRITONTOP_SIGQUIT_DUMP"

// stopContext is the context of a command that a stop signal ends
// gracefully: the first signal cancels it (the run drains its requests for
// --drain and writes its summary and files); a second one also cancels the
// run's hurry (session.WithHurry), which cuts the drain short (requests in
// flight are cancelled now) while the summary and files are still written;
// a third exits at once.
func stopContext(stderr io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	hurry, cancelHurry := context.WithCancel(context.Background())
	ctx = session.WithHurry(ctx, hurry)
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, stopSignals()...)
	done := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-sigs:
			}
			switch n {
			case 1:
				fmt.Fprintln(stderr, "tritontop: stopping: requests in flight may finish for up to --drain; interrupt again to stop now")
				cancel()
			case 2:
				fmt.Fprintln(stderr, "tritontop: stopping now: requests in flight are cancelled; the summary and files are still written (once more to quit at once)")
				cancelHurry()
			default:
				fmt.Fprintln(stderr, "tritontop: quit at once: the summary and files were not finished")
				os.Exit(exitFail)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
		cancelHurry()
	}
}

// stopSignals end a run the way q does: what was measured is summarized
// and written. SIGHUP is a dropped SSH session, which must not lose a run;
// SIGQUIT (Ctrl-\) too, unless TRITONTOP_SIGQUIT_DUMP asks for Go's
// goroutine dump.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	if os.Getenv(sigquitDumpEnv) == "" {
		sigs = append(sigs, syscall.SIGQUIT)
	}
	return sigs
}
