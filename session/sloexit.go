package session

import (
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/report"
)

// sloMissed is a run that went as asked but did not hold its SLO: no level
// of a range met --latency-threshold. It exits with exitSLO, apart from a
// failed run (1) and a usage error (2), so that a script or CI job can tell
// "the server is too slow" from "the test broke".
type sloMissed struct{ slo string }

func (e sloMissed) Error() string {
	return "no level met " + e.slo + " (exit status 99: SLO missed)"
}

// sloVerdict is the run's verdict on its SLO: sloMissed when a range with
// an SLO measured levels and none met it, nil otherwise. A capacity plan
// gives its own verdict.
func sloVerdict(f *Config, sum record.Summary) error {
	if f.Plan != nil {
		return nil
	}
	if slo, missed := report.SLOMissed(sum); missed {
		return sloMissed{slo: slo}
	}
	return nil
}
