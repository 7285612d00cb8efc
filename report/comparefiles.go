package report

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/internal/outfile"
	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/record"
)

// CompareFiles is tritontop compare's settings: two run files, their
// labels, the output's format, and the bounds that make it a CI gate
// (FailIf: the change from A to B fails the job, exit 99, only when past
// its bound and more than noise), with its JUnit file and job summary.
type CompareFiles struct {
	Files, Labels  []string
	JSON, Markdown bool
	FailIf         []string
	JUnit          string
	// Alpha is the noise tests' significance level (DefaultAlpha).
	Alpha       float64
	StepSummary string
	BeyondNoise bool
}

// parse checks the flags before any file is read.
func (f *CompareFiles) parse() ([]FailIf, error) {
	if !(f.Alpha > 0 && f.Alpha < 0.5) {
		return nil, usage.Error{Err: fmt.Errorf("--alpha %g is out of range: use a level between 0 and 0.5, e.g. 0.05", f.Alpha)}
	}
	var out []FailIf
	for _, e := range f.FailIf {
		b, err := ParseFailIf(e)
		if err != nil {
			return nil, usage.Error{Err: err}
		}
		b.BeyondNoise = f.BeyondNoise
		out = append(out, b)
	}
	if f.StepSummary != "" {
		if err := outfile.CheckPath("--step-summary", f.StepSummary); err != nil {
			return nil, usage.Error{Err: err}
		}
	}
	if f.JUnit != "" {
		if len(out) == 0 {
			return nil, usage.Error{Err: fmt.Errorf("--junit needs a --fail-if to check")}
		}
		if err := outfile.CheckPath("--junit", f.JUnit); err != nil {
			return nil, usage.Error{Err: err}
		}
	}
	return out, nil
}

// apply tests the comparison's noise and checks the bounds into it.
func (f *CompareFiles) apply(c *Comparison, a, b *record.Run, bounds []FailIf) []FailIfResult {
	c.AddNoise(a, b, f.Alpha)
	return c.CheckFailIf(bounds)
}

// verdict writes --junit and returns an sloError naming the bounds that
// failed, nil when none did.
func (f *CompareFiles) verdict(c *Comparison, failed []FailIfResult) error {
	if f.StepSummary != "" {
		if err := outfile.AppendStepSummary(f.StepSummary, c.WriteMarkdown); err != nil {
			return err
		}
	}
	if f.JUnit != "" {
		s := gate.Suite{Name: "tritontop compare " + c.A.Label + " " + c.B.Label,
			Properties: [][2]string{{"a", c.A.Label}, {"b", c.B.Label}, {"model", c.B.Model}}}
		for _, r := range c.FailIf {
			gc := gate.Case{Name: r.Expr + " at " + r.Level, Class: "tritontop.compare", Pass: !r.Failed}
			if r.Failed {
				gc.Message, gc.Detail = r.Describe(), r.Describe()
			}
			s.Cases = append(s.Cases, gc)
		}
		if err := gate.WriteJUnitFile(f.JUnit, s); err != nil {
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

// Run is tritontop compare: the two run files side by side, level by
// level and whole, with the noise of each change, the bounds checked, and
// the verdict: a gate.Failure when a bound broke past the noise.
func (g *CompareFiles) Run(stdout, stderr io.Writer) error {
	files, labels, jsonOut, markdown, gates := g.Files, g.Labels, g.JSON, g.Markdown, g
	if len(files) != 2 {
		return usage.Error{Err: fmt.Errorf("compare needs two run files, got %d: tritontop compare A.jsonl B.jsonl", len(files))}
	}
	if jsonOut && markdown {
		return usage.Error{Err: errors.New("choose --json or --markdown, not both")}
	}
	bounds, err := gates.parse()
	if err != nil {
		return err
	}
	names, err := RunLabels(files, labels)
	if err != nil {
		return err
	}
	a, err := ReadRun(files[0], stderr)
	if err != nil {
		return err
	}
	b, err := ReadRun(files[1], stderr)
	if err != nil {
		return err
	}
	c, err := Compare(SummarizeRepeated(a), SummarizeRepeated(b), names[0], names[1])
	if err != nil {
		return usage.Error{Err: err}
	}
	failed := gates.apply(c, a, b, bounds)
	switch {
	case jsonOut:
		err = c.WriteJSON(stdout)
	case markdown:
		err = c.WriteMarkdown(stdout)
	default:
		err = c.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	return gates.verdict(c, failed)
}
