package main

import (
	"flag"

	"github.com/tritontop/tritontop/report"
)

// registerCompareGateFlags adds compare's gate flags to fs.
func registerCompareGateFlags(fs *flag.FlagSet, f *report.CompareFiles) {
	fs.Var(repeated{&f.FailIf}, "fail-if",
		"exit 99 when METRIC changed past a bound from A to B and the change is significant: 'p99:+10%' (grew by more than 10%), 'throughput:-5%' (fell by more than 5%); repeatable")
	fs.StringVar(&f.JUnit, "junit", "", "write the --fail-if checks to FILE as JUnit XML, one testcase each")
	fs.BoolVar(&f.BeyondNoise, "beyond-noise", false, "with --fail-if: fail only when the change is past its bound by more than the noise (B against A moved by the bound), not only past it and significant")
	fs.StringVar(&f.StepSummary, "step-summary", "", "append the comparison as Markdown to FILE, e.g. --step-summary \"$GITHUB_STEP_SUMMARY\" for a GitHub Actions job summary")
	fs.Float64Var(&f.Alpha, "alpha", report.DefaultAlpha, "significance level of the noise tests: a change is significant when p < alpha (or the bootstrap's 1-alpha interval leaves out 0)")
}
