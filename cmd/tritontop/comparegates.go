package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// compareGateFlags make tritontop compare a CI gate: bounds on the change
// from a baseline run that fail the job (exit 99) only when the change is
// past them and more than noise, and the JUnit file of those checks.
type compareGateFlags struct {
	failIf      []string
	junit       string
	alpha       float64
	stepSummary string
	beyondNoise bool
}

// registerCompareGateFlags adds compare's gate flags to fs.
func registerCompareGateFlags(fs *flag.FlagSet, f *compareGateFlags) {
	fs.Var(repeated{&f.failIf}, "fail-if",
		"exit 99 when METRIC changed past a bound from A to B and the change is significant: 'p99:+10%' (grew by more than 10%), 'throughput:-5%' (fell by more than 5%); repeatable")
	fs.StringVar(&f.junit, "junit", "", "write the --fail-if checks to FILE as JUnit XML, one testcase each")
	fs.BoolVar(&f.beyondNoise, "beyond-noise", false, "with --fail-if: fail only when the change is past its bound by more than the noise (B against A moved by the bound), not only past it and significant")
	fs.StringVar(&f.stepSummary, "step-summary", "", "append the comparison as Markdown to FILE, e.g. --step-summary \"$GITHUB_STEP_SUMMARY\" for a GitHub Actions job summary")
	fs.Float64Var(&f.alpha, "alpha", report.DefaultAlpha, "significance level of the noise tests: a change is significant when p < alpha (or the bootstrap's 1-alpha interval leaves out 0)")
}

// parse checks the flags before any file is read.
func (f *compareGateFlags) parse() ([]report.FailIf, error) {
	if !(f.alpha > 0 && f.alpha < 0.5) {
		return nil, usage.Error{Err: fmt.Errorf("--alpha %g is out of range: use a level between 0 and 0.5, e.g. 0.05", f.alpha)}
	}
	var out []report.FailIf
	for _, e := range f.failIf {
		b, err := report.ParseFailIf(e)
		if err != nil {
			return nil, usage.Error{Err: err}
		}
		b.BeyondNoise = f.beyondNoise
		out = append(out, b)
	}
	if f.stepSummary != "" {
		if err := outfile.CheckPath("--step-summary", f.stepSummary); err != nil {
			return nil, usage.Error{Err: err}
		}
	}
	if f.junit != "" {
		if len(out) == 0 {
			return nil, usage.Error{Err: fmt.Errorf("--junit needs a --fail-if to check")}
		}
		if err := outfile.CheckPath("--junit", f.junit); err != nil {
			return nil, usage.Error{Err: err}
		}
	}
	return out, nil
}

// apply tests the comparison's noise and checks the bounds into it.
func (f *compareGateFlags) apply(c *report.Comparison, a, b *record.Run, bounds []report.FailIf) []report.FailIfResult {
	c.AddNoise(a, b, f.alpha)
	return c.CheckFailIf(bounds)
}

// verdict writes --junit and returns an sloError naming the bounds that
// failed, nil when none did.
func (f *compareGateFlags) verdict(c *report.Comparison, failed []report.FailIfResult) error {
	if f.stepSummary != "" {
		if err := outfile.AppendStepSummary(f.stepSummary, c.WriteMarkdown); err != nil {
			return err
		}
	}
	if f.junit != "" {
		s := gate.Suite{Name: "tritontop compare " + c.A.Label + " " + c.B.Label,
			Properties: [][2]string{{"a", c.A.Label}, {"b", c.B.Label}, {"model", c.B.Model}}}
		for _, r := range c.FailIf {
			gc := gate.Case{Name: r.Expr + " at " + r.Level, Class: "tritontop.compare", Pass: !r.Failed}
			if r.Failed {
				gc.Message, gc.Detail = r.Describe(), r.Describe()
			}
			s.Cases = append(s.Cases, gc)
		}
		if err := gate.WriteJUnitFile(f.junit, s); err != nil {
			return err
		}
	}
	if len(failed) == 0 {
		return nil
	}
	parts := make([]string, len(failed))
	for i, r := range failed {
		parts[i] = r.Describe()
	}
	return gate.Failure{Err: fmt.Errorf("%d --fail-if bound(s) broken: %s", len(failed), strings.Join(parts, "; "))}
}
