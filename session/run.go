package session

import (
	"context"
	"errors"
	"io"

	"github.com/tritontop/tritontop/gate"
	"github.com/tritontop/tritontop/plan"
)

// Run runs cfg as the command line's load commands do (tritontop, demo,
// plan): one session through its phases, or, with Gates.Repeat over 1, that
// many sessions recorded as one run.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if err := cfg.check(stderr); err != nil {
		return err
	}
	if cfg.Gates.Repeat > 1 {
		return runRepeats(ctx, &cfg, stdout, stderr)
	}
	return runSession(ctx, &cfg, stdout, stderr)
}

// IsVerdict reports whether err says that the run went as asked but what it
// had to hold did not: no level of a range met its SLO, a threshold was
// breached, or a plan cannot meet its SLO or refused a client-bound
// measurement (the command line's exit code 99).
func IsVerdict(err error) bool {
	var se gate.Failure
	var cb *plan.ClientBoundError
	var nc *plan.NoCapacityError
	return errors.As(err, new(sloMissed)) || errors.As(err, &se) || errors.As(err, &cb) || errors.As(err, &nc)
}
