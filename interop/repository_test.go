package interop_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
)

// overrideConfig is identity_int32's config with max_batch_size and the
// instance count changed, in JSON as a load request's config override.
func overrideConfig(maxBatch, instances int) string {
	return fmt.Sprintf(`{"name": "identity_int32", "backend": "identity", "max_batch_size": %d,
"input": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [-1]}],
"output": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [-1]}],
"instance_group": [{"kind": "KIND_CPU", "count": %d}],
"dynamic_batching": {"max_queue_delay_microseconds": 100}}`, maxBatch, instances)
}

// TestRepositoryAPI drives a real Triton's repository API in explicit
// model control (load, unload, a config override) around tritontop's runs:
//
//   - identity_int32 loaded with a config override (max batch 16, three
//     instances): tritontop's run file header has the new config, and
//     the run's counts and server times are Triton's (checkExact);
//   - unloaded: a run is refused in one line that says the model is in
//     the repository but not loaded (its state, Triton's message) and how
//     to load it, exit code 2;
//   - loaded again without an override: the header has the repository's
//     config again (max batch 64, one instance).
func TestRepositoryAPI(t *testing.T) {
	t.Parallel()
	wallTime(t)
	srv := interop.Start(t, interop.Options{Models: []string{identity}, Explicit: true})
	if code, body := srv.LoadModel(t, identity, overrideConfig(16, 3)); code != http.StatusOK {
		t.Fatalf("load with a config override: HTTP %d %s", code, body)
	}
	if mb := srv.ModelConfig(t, identity)["max_batch_size"]; mb != 16.0 {
		t.Fatalf("Triton serves max_batch_size %v after the override, want 16", mb)
	}
	c := configFor(srv, "grpc", identity)
	c.Shapes, c.Concurrency = []string{"INPUT0:16"}, 4
	run, d, _ := measure(t, srv, identity, c)
	checkExact(t, "the run on the override", run.Summary.Client, run.Summary.Server, d)
	checkHeaderConfig(t, run.Header.Model.Config, 16, 3)

	if code, body := srv.UnloadModel(t, identity); code != http.StatusOK {
		t.Fatalf("unload: HTTP %d %s", code, body)
	}
	// Triton unloads in the background: UNLOADING, then UNAVAILABLE.
	if !eventually(30*time.Second, func() bool { return srv.ModelState(t, identity) == "UNAVAILABLE" }) {
		t.Fatalf("the model is still %s after its unload", srv.ModelState(t, identity))
	}
	err, stdout, stderr := runConfig(t, c)
	msg := fmt.Sprint(err)
	t.Logf("a run on the unloaded model: exit %d: %s\nstdout: %s\nstderr: %s", exitCode(err), msg, stdout, stderr)
	oneLine(t, "the refusal", msg)
	if exitCode(err) != 2 || !strings.Contains(msg, `model "identity_int32" is in the server's repository but not loaded (UNAVAILABLE: unloaded;`) ||
		!strings.Contains(msg, "Request for unknown model: 'identity_int32' has no available versions") ||
		!strings.Contains(msg, "POST v2/repository/models/identity_int32/load") {
		t.Errorf("a run on the unloaded model: exit %d, %q; want a refusal that says it is not loaded, in Triton's words, and how to load it", exitCode(err), msg)
	}

	if code, body := srv.LoadModel(t, identity, ""); code != http.StatusOK {
		t.Fatalf("load again: HTTP %d %s", code, body)
	}
	run, d, _ = measure(t, srv, identity, c)
	checkExact(t, "the run on the repository's config", run.Summary.Client, run.Summary.Server, d)
	checkHeaderConfig(t, run.Header.Model.Config, 64, 1)
}

// checkHeaderConfig holds a run file header's model config (protojson with
// proto names) to the max batch size and instance count Triton serves.
func checkHeaderConfig(t *testing.T, raw json.RawMessage, maxBatch, instances int) {
	t.Helper()
	var cfg struct {
		MaxBatchSize  int `json:"max_batch_size"`
		InstanceGroup []struct {
			Count int `json:"count"`
		} `json:"instance_group"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("the header's model config: %v: %s", err, raw)
	}
	n := 0
	for _, g := range cfg.InstanceGroup {
		n += g.Count
	}
	if cfg.MaxBatchSize != maxBatch || n != instances {
		t.Errorf("the header's config has max batch %d, %d instances; Triton serves %d, %d: %s", cfg.MaxBatchSize, n, maxBatch, instances, raw)
	}
}

// TestReloadDuringRun loads identity_int32 again with a config override
// in the middle of a 3 s run at concurrency 4 (ticks of 100 ms), once
// Triton has counted 2000 of its requests. Triton serves through it: no
// request fails. The run file's header keeps the config the run started
// on. Then:
//
//   - an override that changes only the instance count (two) is made in
//     place: Triton keeps the model's statistics, and the run's counts and
//     server times are Triton's deltas over it (checkExact);
//   - one that changes the max batch size (16) reloads the model, whose
//     statistics start again from 0: tritontop reports a reset of the
//     server's counters (the run file's server_resets, the summary's line)
//     and leaves that tick's server numbers out, so its server count is
//     under its own. The next reading must find the new model's counters
//     under the old ones: at 100 ms ticks that holds up to 20,000
//     requests a second.
func TestReloadDuringRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		maxBatch, instances int
		reset               bool
	}{{"instances", 64, 2, false}, {"max-batch", 16, 1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wallTime(t)
			srv := interop.Start(t, interop.Options{Models: []string{identity}, Explicit: true})
			c := configFor(srv, "grpc", identity)
			c.Shapes, c.Concurrency, c.Tick, c.Duration = []string{"INPUT0:16"}, 4, 100*time.Millisecond, 3*time.Second
			before := srv.Statistics(t, identity)
			// Reloaded once Triton counted 1,000 requests: more than a
			// tick's (100 ms) on an idle host, so that the next read sees
			// the counter go back (the reset), and within the 3 s run on a
			// busy host (2,000 was not, once, and the test waited for it).
			const after = 1000
			runEnded := make(chan struct{})
			reloaded := reloadAt(t, srv, after, overrideConfig(tc.maxBatch, tc.instances), runEnded)
			run, stdout := recordRun(t, c)
			close(runEnded)
			at := <-reloaded
			if at < after {
				t.Fatalf("the run ended after Triton counted %d requests, before the reload at %d", at, after)
			}
			sum := run.Summary
			end := srv.Statistics(t, identity)
			if !tc.reset {
				// Kept in place: the counters go on from before.
				settled(t, srv, identity, before, sum.Client.Successes)
				end = srv.Statistics(t, identity)
			}
			t.Logf("reloaded after %d requests; tritontop: %d requests, %d errors, server %d, resets at %v; Triton's counter at the end: %d",
				at, sum.Client.Successes, sum.Client.Errors, sum.Server.SuccessCount, sum.ServerResets, end.Inference.Success.Count)
			if sum.Client.Errors != 0 {
				t.Errorf("%d requests failed during the reload: %+v", sum.Client.Errors, sum.Client.ErrorsByCode)
			}
			checkHeaderConfig(t, run.Header.Model.Config, 64, 1)
			if !tc.reset {
				checkExact(t, "the run", sum.Client, sum.Server, interop.Delta(before, end))
				if len(sum.ServerResets) != 0 {
					t.Errorf("resets at %v; Triton kept its counters", sum.ServerResets)
				}
				return
			}
			if uint64(sum.Client.Successes) <= end.Inference.Success.Count {
				t.Errorf("tritontop counted %d requests; Triton %d since the reload alone", sum.Client.Successes, end.Inference.Success.Count)
			}
			if len(sum.ServerResets) == 0 || !strings.Contains(stdout, "Server counters reset at") {
				t.Errorf("the reload is not reported as a reset of the server's counters (resets %v)", sum.ServerResets)
			}
			if sum.Server.SuccessCount >= sum.Client.Successes {
				t.Errorf("tritontop's server count %d covers every one of its %d requests, the reset tick's too", sum.Server.SuccessCount, sum.Client.Successes)
			}
		})
	}
}

// reloadAt loads identity_int32 with config once Triton has counted n of
// its requests, in a goroutine of its own, unless runEnded closes first;
// the channel gets the count it saw (below n: no reload). The test ends
// only after it (t.Cleanup), so that it never reports to a finished test.
func reloadAt(t *testing.T, srv *interop.Server, n uint64, config string, runEnded <-chan struct{}) <-chan uint64 {
	reloaded := make(chan uint64, 1)
	finished := make(chan struct{})
	ended := make(chan struct{})
	t.Cleanup(func() { close(ended); <-finished })
	go func() {
		defer close(finished)
		var at uint64
		defer func() { reloaded <- at }()
		for at < n {
			select {
			case <-ended:
				return
			case <-runEnded:
				return
			case <-time.After(10 * time.Millisecond):
			}
			at = srv.Statistics(t, identity).Inference.Success.Count
		}
		if code, body := srv.LoadModel(t, identity, config); code != http.StatusOK {
			t.Errorf("reload: HTTP %d %s", code, body)
		}
	}()
	return reloaded
}
