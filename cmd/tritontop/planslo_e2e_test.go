package main

import (
	"strings"
	"testing"
)

// TestPlanImpossibleSLOExits99 plans against `tritontop sim` for an SLO
// no level can meet (p99 under 1 µs): no replicas are planned, the plan
// says why in one line on stderr and exits with exitSLO, and its JSON
// summary says the server was the simulator. On a busy host the refusal
// may blame the client rather than the SLO; both are a plan not made, and
// both exit 99.
func TestPlanImpossibleSLOExits99(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: real binary, simulator and a plan of about half a minute")
	}
	bin := buildBinary(t)
	_, addrs, _ := startSimCommand(t, bin)
	code, stdout, stderr := planRun(t, bin, t.TempDir(), "plan", "-u", addrs["gRPC"], "-m", "resnet50",
		"--slo", "p99:1us", "--target-rate", "100", "-p", "1000", "--repeat", "1", "--headless", "--json")
	if code != exitSLO {
		t.Fatalf("exit %d, want %d: %s", code, exitSLO, lastLines(stderr, 8))
	}
	if !strings.Contains(stderr, "tritontop: no plan: ") || !strings.Contains(stderr, "no level met the SLO") {
		t.Errorf("stderr does not say that no level met the SLO:\n%s", lastLines(stderr, 4))
	}
	sum := planSummary(t, stdout, stderr)
	if p := sum.Plan; p.Replicas != 0 || p.HPA != "" || p.Refused == "" {
		t.Errorf("a plan was made for an impossible SLO: %+v", p)
	}
	if !sum.Simulated || !sum.Plan.Simulated {
		t.Errorf("the plan's summary does not say the server was the simulator: summary %v, plan %v", sum.Simulated, sum.Plan.Simulated)
	}
}
