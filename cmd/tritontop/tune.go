package main

import (
	"flag"
	"io"

	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/tune"
)

// runTune is `tritontop tune`: the model configuration (instances, max
// batch size, dynamic batcher) that does best under an SLO, found by
// loading each candidate through the repository API and measuring it; the
// original configuration is loaded back at the end. On a terminal the
// dashboard shows the trials as they go (its tune pane); --headless prints
// a line per trial.
func runTune(args []string, stdout, stderr io.Writer) int {
	o := tune.Defaults()
	c, err := parseLoadFlags("tritontop tune", args, stderr, func(fs *flag.FlagSet, _ *session.Config) {
		registerTuneFlags(fs, &o)
		registerPlanBudgetFlags(fs, &o.Plan.Budget)
	})
	if err != nil {
		return flagExit("tritontop tune", err, stderr)
	}
	o.Session, o.Session.Args = *c, append([]string{"tune"}, args...)
	ctx, stop := stopContext(stderr)
	defer stop()
	return exitFor(tune.Run(ctx, o, stdout, stderr), stderr)
}

// registerTuneFlags adds tune's own flags to fs.
func registerTuneFlags(fs *flag.FlagSet, o *tune.Options) {
	fs.StringVar(&o.Objective, "objective", o.Objective, "what the best configuration maximizes under the SLO: throughput, throughput-per-gpu or latency (the lowest --slo latency at --min-throughput or more)")
	fs.Float64Var(&o.MinThroughput, "min-throughput", o.MinThroughput, "the least infer/s a measurement must reach to count, with --objective latency")
	fs.StringVar(&o.Instances, "instances", o.Instances, "instance counts to try (every instance group's count): a list (1,2,4) or a range LO:HI")
	fs.StringVar(&o.MaxBatchSizes, "max-batch-sizes", o.MaxBatchSizes, "max_batch_size values to try: a list, or LO:HI for the powers of two between (and the ends)")
	fs.StringVar(&o.QueueDelays, "queue-delays", o.QueueDelays, "the dynamic batcher's max_queue_delay_microseconds values to try, a list (those of half the SLO or more are left out)")
	fs.StringVar(&o.Preferred, "preferred-batch-sizes", o.Preferred, "preferred_batch_size choices to try: max ([max_batch_size]), half ([max_batch_size/2, max_batch_size]), or both")
	fs.StringVar(&o.Concurrencies, "concurrencies", o.Concurrencies, "the loads a configuration may be measured at, requests in flight: a list, or LO:HI for the powers of two between")
	fs.IntVar(&o.MaxTrials, "budget-trials", o.MaxTrials, "the most trials (a configuration at one concurrency) the search measures; 0 for no bound")
	fs.DurationVar(&o.MaxTime, "budget-time", o.MaxTime, "the longest the search may take: no trial starts that the mean trial says would end past it; 0 for no bound")
	fs.StringVar(&o.Search, "search", o.Search, "climb (the search) or grid (every point of the grid: the brute force, to check the search against)")
	fs.StringVar(&o.Output, "o", o.Output, "the file the best configuration is written to, a config.pbtxt (refused if it exists, unless --force)")
	fs.Float64Var(&o.Plan.TargetRate, "target-rate", o.Plan.TargetRate, "requests per second to plan replicas for at the best configuration (a capacity search after the tune, as tritontop plan runs it); 0 for no plan")
	fs.Float64Var(&o.Plan.GPUUtilizationTarget, "gpu-utilization-target", o.Plan.GPUUtilizationTarget, "the plan's ceiling: no GPU above this utilization (0..1) at a passing rate, and the autoscaler's target")
	fs.StringVar(&o.Plan.Deployment, "deployment", o.Plan.Deployment, "the Triton Deployment the plan's autoscaler scales")
	fs.StringVar(&o.Plan.Namespace, "namespace", o.Plan.Namespace, "its namespace")
}
