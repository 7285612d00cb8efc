// Command tritontop is a live terminal dashboard for load testing NVIDIA
// Triton Inference Server, with a headless recording mode, a replay of
// recorded runs, and a Triton-compatible simulator.
//
//	tritontop -m MODEL -u HOST:8001          live dashboard driving load
//	tritontop -m MODEL --record run.jsonl    headless (or record while watching)
//	tritontop demo                           simulator + dashboard, no arguments
//	tritontop sim                            the simulator alone
//	tritontop replay run.jsonl               the dashboard fed from a run file
//	tritontop report run.jsonl -o run.html   a self-contained HTML report
//	tritontop tune -m MODEL --slo p99:100ms  the best model configuration
//	tritontop compare a.jsonl b.jsonl        two runs side by side
//	tritontop merge w0.jsonl w1.jsonl -o all.jsonl  one run from many workers
//
// This package only parses flags and wires the library packages together.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tritontop/tritontop/session"
)

// Exit codes, as documented in the README.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
	// exitSLO: the run itself went as asked, but what it was asked to
	// hold did not hold: a missed SLO (no level of a range met it, a plan
	// that cannot meet it or refuses a client-bound measurement), a
	// breached --threshold, a compare --fail-if. k6 uses the same code.
	exitSLO = 99
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "sim":
			return runSim(args[1:], stdout, stderr)
		case "demo":
			return runDemo(args[1:], stdout, stderr)
		case "replay":
			return runReplay(args[1:], stdout, stderr)
		case "plan":
			return runPlan(args[1:], stdout, stderr)
		case "tune":
			return runTune(args[1:], stdout, stderr)
		case "report":
			return runReport(args[1:], stdout, stderr)
		case "compare":
			return runCompare(args[1:], stdout, stderr)
		case "merge":
			return runMerge(args[1:], stdout, stderr)
		case "capture":
			return runCapture(args[1:], stdout, stderr)
		case "version", "--version", "-version":
			fmt.Fprintf(stdout, "tritontop %s\n", session.Version)
			return exitOK
		case "help", "-h", "--help", "-help":
			fmt.Fprint(stdout, usageText)
			fmt.Fprintln(stdout, "\nFlags of a load run (tritontop, tritontop demo):")
			c := session.Defaults()
			fs := newLoadFlagSet("tritontop", &c, stdout, new(error))
			fs.PrintDefaults()
			return exitOK
		}
	}
	return runLoad(args, stdout, stderr)
}

const usageText = `tritontop: live load testing dashboard for NVIDIA Triton Inference Server

Usage:
  tritontop -m MODEL [-u HOST:8001] [flags]   drive load and watch it live
  tritontop -m MODEL --record FILE [flags]     record a run (headless without a terminal)
  tritontop demo                               start the simulator and open the dashboard
  tritontop sim [flags]                        run the Triton-compatible simulator
  tritontop replay FILE [--speed X]            replay a recorded run in the dashboard
  tritontop plan -m MODEL --slo p99:100ms --target-rate N [--demo]
                                               capacity plan: one replica's capacity, replicas, autoscaling
  tritontop tune -m MODEL --slo p99:100ms [--objective throughput] [-o config.pbtxt]
                                               the model configuration that does best under the SLO
  tritontop replay FILE -f out.csv [--json | --markdown]
                                               a recorded run's CSV and summary
  tritontop report RUN.jsonl... -o report.html an HTML report of runs (--label NAME each)
  tritontop compare A.jsonl B.jsonl [--json | --markdown]
                                               two runs side by side, level by level
  tritontop merge W0.jsonl W1.jsonl... -o all.jsonl
                                               one run from the run files of --workers
  tritontop capture --upstream HOST:8001 -o traffic.jsonl
                                               a proxy that records Triton's traffic for --trace
  tritontop version

"tritontop sim -h", "tritontop replay -h", "tritontop plan -h", "tritontop tune -h",
"tritontop report -h" and "tritontop compare -h" list those subcommands' flags.
Exit codes: 0 ok, 1 run failed, 2 usage error, 99 an SLO missed (no level of a range met
--latency-threshold, a plan that cannot meet its SLO or refuses a client-bound measurement),
a --threshold breached or a compare --fail-if bound broken.
`
