package interop_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/plan"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/stats"
)

// slowIdentity is an identity model that takes 10 ms an execution (the
// identity backend's execute_delay_ms), batches of up to 4, one instance:
// about 400 requests a second at full batches, so that a plan's search
// has few requests to send.
const slowIdentity = `name: "slow_identity"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
dynamic_batching { max_queue_delay_microseconds: 1000 }
parameters [ { key: "execute_delay_ms" value: { string_value: "10" } } ]
`

// TestPlan runs tritontop plan (Config.Plan: a closed-loop probe, then a
// binary search over request rates) against a real Triton's slow_identity
// for 1000 requests a second under p99 ≤ 100 ms, with short windows (200
// ms, ticks of 100 ms, 3 trials a level, the capacity level measured
// once). On a busy 2-core host the client may be what limits the levels:
// then the plan is refused (exit code 99); else it is a plan (exit 0).
// (Were no level to meet the SLO with none client-bound, it would be no
// plan, exit 99, and no step of the run file may have met it.) Either way
// what it prints is held to its run file, and the run's counts to
// Triton's:
//
//   - the whole run's counts and server times are Triton's (checkExact);
//   - a capacity it prints ("One replica holds X req/s (LEVEL)") is the
//     throughput of a step of the run file at that level that met the
//     SLO, and the replicas it plans are enough for the target at it;
//   - a refusal it prints is the plan's in the run file, and the level and
//     diagnosis it names ("at LEVEL: MESSAGE") are a step of the run file
//     with that diagnosis, one that says the client limited it.
func TestPlan(t *testing.T) {
	t.Parallel()
	wallTime(t)
	const model = "slow_identity"
	srv := interop.Start(t, interop.Options{Models: []string{}, Edit: func(t testing.TB, repo string) {
		interop.WriteConfig(t, repo, model, slowIdentity)
	}})
	pc := session.DefaultPlan()
	pc.TargetRate, pc.Budget.Repeat = 1000, 1
	c := configFor(srv, "grpc", model)
	c.Duration, c.Plan, c.SLO.Specs = 0, &pc, []string{"p99:100ms"}
	c.MeasurementIntervalMS, c.Tick, c.MaxTrials = 200, 100*time.Millisecond, 3
	c.Given = map[string]bool{"measurement-interval": true, "tick": true, "max-trials": true}
	c.Record = filepath.Join(t.TempDir(), "plan.jsonl")
	before := srv.Statistics(t, model)
	err, stdout, stderr := runConfig(t, c)
	t.Logf("exit %d: %v\nstdout:\n%s", exitCode(err), err, stdout)
	run, rerr := record.ReadAll(c.Record)
	if rerr != nil || run.Summary == nil {
		t.Fatalf("the plan's run file: %v\nstderr:\n%s", rerr, stderr)
	}
	sum := run.Summary
	d := settled(t, srv, model, before, sum.Client.Successes)
	checkExact(t, "the plan's run", sum.Client, sum.Server, d)
	p := sum.Plan
	if p == nil {
		checkNoCapacity(t, err, sum.Steps)
		return
	}
	if !strings.Contains(stdout, "Capacity plan\n") {
		t.Fatalf("the run file has a plan (%+v), and none is printed", p)
	}
	t.Logf("plan %+v; steps %s", *p, stepLoads(sum.Steps))
	if p.Capacity > 0 {
		checkCapacity(t, stdout, p, sum.Steps)
	}
	if p.Refused == "" {
		checkPlanned(t, err, stdout, p)
		return
	}
	checkRefused(t, err, stdout, p, sum.Steps)
}

// checkCapacity holds a printed capacity to the run file: a step at the
// capacity level met the SLO with that throughput.
func checkCapacity(t *testing.T, stdout string, p *record.Plan, steps []record.Step) {
	t.Helper()
	line := fmt.Sprintf("One replica holds %s req/s (%s) under the SLO.", strconv.FormatFloat(p.Capacity, 'f', 1, 64), p.CapacityLevel.String())
	if !strings.Contains(stdout, line) {
		t.Errorf("the plan does not print %q", line)
	}
	for _, st := range steps {
		m := st.Measurement
		if st.Load.String() == p.CapacityLevel.String() && st.Client.RequestsPerS == p.Capacity &&
			m != nil && m.SLO != nil && m.SLO.Pass && m.SLO.Latency <= 100*time.Millisecond {
			return
		}
	}
	t.Errorf("no step of the run file at %s met the SLO at %v req/s", p.CapacityLevel.String(), p.Capacity)
}

// checkPlanned holds a plan to its target: exit 0, replicas enough for the
// target at the capacity, printed.
func checkPlanned(t *testing.T, err error, stdout string, p *record.Plan) {
	t.Helper()
	if err != nil || p.ClientBound {
		t.Errorf("a plan with an error (%v), or client-bound (%v)", err, p.ClientBound)
	}
	if need := int(math.Ceil(p.TargetRate / p.Capacity)); p.Replicas < need {
		t.Errorf("%d replicas for %v req/s at %v req/s each; %d needed", p.Replicas, p.TargetRate, p.Capacity, need)
	}
	if want := fmt.Sprintf("For 1000 req/s: %d replicas", p.Replicas); !strings.Contains(stdout, want) {
		t.Errorf("the plan does not print %q", want)
	}
}

// checkNoCapacity holds a search in which no level met the SLO, and the
// client limited none, to the run file: exit 99, and no step passed.
func checkNoCapacity(t *testing.T, err error, steps []record.Step) {
	t.Helper()
	var nc *plan.NoCapacityError
	if exitCode(err) != 99 || !errors.As(err, &nc) {
		t.Fatalf("no plan in the run file: exit %d, %v; want exit 99 for no capacity", exitCode(err), err)
	}
	for _, st := range steps {
		if m := st.Measurement; m != nil && m.SLO != nil && m.SLO.Pass {
			t.Errorf("%v: no capacity, yet the step at %s met the SLO", err, st.Load.String())
		}
	}
}

// checkRefused holds a refusal to the run file: exit 99, the run file's
// refusal printed, and the level it blames a step whose diagnosis says
// the client limited it.
func checkRefused(t *testing.T, err error, stdout string, p *record.Plan, steps []record.Step) {
	t.Helper()
	var cb *plan.ClientBoundError
	if exitCode(err) != 99 || !errors.As(err, &cb) || !p.ClientBound {
		t.Fatalf("a refused plan: exit %d, %v (client-bound %v); want exit 99 for a client-bound measurement", exitCode(err), err, p.ClientBound)
	}
	oneLine(t, "the refusal", err.Error())
	if !strings.Contains(stdout, "NO REPLICAS PLANNED: "+p.Refused+".") {
		t.Errorf("the printed plan does not have the run file's refusal %q", p.Refused)
	}
	level, msg, ok := strings.Cut(strings.TrimPrefix(cb.Why, "at "), ": ")
	if !ok {
		t.Fatalf("the refusal names no level: %q", cb.Why)
	}
	for _, st := range steps {
		for _, f := range st.Diagnosis {
			if st.Load.String() == level && f.Message == msg && (f.Verdict == stats.ClientBound || f.Verdict == stats.FallingBehind) {
				return
			}
		}
	}
	t.Errorf("no step of the run file at %s has the diagnosis %q", level, msg)
}
