package interop_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
	"github.com/tritontop/tritontop/tune"
)

// servedConfig is the model's configuration as the server reports it
// (GET v2/models/{m}/config).
func servedConfig(t *testing.T, srv *interop.Server, model string) *pb.ModelConfig {
	t.Helper()
	resp, err := http.Get("http://" + srv.HTTP + "/v2/models/" + model + "/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("config of %s: HTTP %d: %s", model, resp.StatusCode, body)
	}
	cfg, err := kserve.ParseConfigJSON(body)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRepositoryLoadWithOverride: over gRPC and HTTP, tritontop's client
// loads identity_int32 with a configuration override and the server
// serves it (its max batch size, instances and batcher); the original
// goes back the same way. A refused override and a server outside
// explicit model control are one line each, with Triton's message.
func TestRepositoryLoadWithOverride(t *testing.T) {
	t.Parallel()
	srv := interop.Start(t, interop.Options{Models: []string{identity}, Explicit: true})
	polling := interop.Start(t, interop.Options{Models: []string{identity}})
	ctx := context.Background()
	orig := servedConfig(t, srv, identity)
	for protocol, addr := range map[string][2]string{"grpc": {srv.GRPC, polling.GRPC}, "http": {srv.HTTP, polling.HTTP}} {
		c := dialInterop(t, addr[0], protocol)
		want := tune.Configure(orig, tune.Point{Instances: 2, MaxBatch: 16, Delay: 500, Preferred: tune.PreferHalf})
		js, err := tune.OverrideJSON(want)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.LoadModel(ctx, identity, js); err != nil {
			t.Fatalf("%s: load with an override: %v", protocol, err)
		}
		got := servedConfig(t, srv, identity)
		if p := tune.PointOf(got); p != (tune.Point{Instances: 2, MaxBatch: 16, Delay: 500, Preferred: tune.PreferHalf}) {
			t.Errorf("%s: the server serves %+v after the override", protocol, p)
		}
		bad := tune.Configure(orig, tune.Point{Instances: 1, MaxBatch: 4, Preferred: tune.PreferMax})
		bad.GetDynamicBatching().PreferredBatchSize = []int32{8}
		js, _ = tune.OverrideJSON(bad)
		err = c.LoadModel(ctx, identity, js)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "failed to poll from model repository") {
			t.Errorf("%s: a preferred batch size over the max: %v", protocol, err)
		}
		js, _ = tune.OverrideJSON(orig)
		if err := c.LoadModel(ctx, identity, js); err != nil {
			t.Fatalf("%s: the original back: %v", protocol, err)
		}
		if back := servedConfig(t, srv, identity); !proto.Equal(back, orig) {
			t.Errorf("%s: after loading the original back the server serves %v, not %v", protocol, back, orig)
		}
		err = dialInterop(t, addr[1], protocol).LoadModel(ctx, identity, "")
		if !errors.Is(err, triton.ErrNotExplicit) || !strings.Contains(err.Error(), "explicit model load / unload is not allowed if polling is enabled") {
			t.Errorf("%s: a load outside explicit mode: %v", protocol, err)
		}
	}
}

// TestTuneRefusesAServerOutsideExplicitMode: tune against a server that
// takes no loads ends before measuring, in one line that says what to do,
// with Triton's message.
func TestTuneRefusesAServerOutsideExplicitMode(t *testing.T) {
	t.Parallel()
	srv := interop.Start(t, interop.Options{Models: []string{identity}})
	o := tune.Defaults()
	o.Session.Model, o.Session.URL, o.Session.Shapes = identity, srv.GRPC, []string{"INPUT0:16"}
	o.Session.SLO.Specs, o.Session.Headless = []string{"p99:100ms"}, true
	o.Output = filepath.Join(t.TempDir(), "config.pbtxt")
	var stdout, stderr bytes.Buffer
	err := tune.Run(context.Background(), o, &stdout, &stderr)
	if err == nil || !errors.Is(err, triton.ErrNotExplicit) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "explicit model load / unload is not allowed if polling is enabled") {
		t.Errorf("tune against a polling server: %v", err)
	}
	if stdout.Len() > 0 {
		t.Errorf("it measured something:\n%s", stdout.String())
	}
}

func dialInterop(t *testing.T, addr, protocol string) triton.Client {
	t.Helper()
	c, err := triton.Dial(context.Background(), addr, triton.Options{Protocol: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// tuneArgs is a short tune of identity_int32 on the CPU: a small grid,
// short windows, a generous SLO, so that it measures on a busy host.
func tuneArgs(srv *interop.Server, out string) []string {
	return []string{"-m", identity, "-u", srv.GRPC, "--shape", "INPUT0:16", "--slo", "p99:2s",
		"--instances", "1:2", "--max-batch-sizes", "4,16", "--queue-delays", "0", "--preferred-batch-sizes", "max",
		"--concurrencies", "1,4", "-p", "300", "--tick", "100ms", "--max-trials", "4", "-s", "50", "-o", out}
}

// watchConfigs polls the server's configuration of the model until stop,
// and returns the distinct ones seen.
func watchConfigs(t *testing.T, srv *interop.Server, stop <-chan struct{}) func() []tune.Point {
	var mu sync.Mutex
	var seen []tune.Point
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			resp, err := http.Get("http://" + srv.HTTP + "/v2/models/" + identity + "/config")
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if cfg, err := kserve.ParseConfigJSON(body); err == nil && resp.StatusCode == http.StatusOK {
				p := tune.PointOf(cfg)
				mu.Lock()
				if len(seen) == 0 || seen[len(seen)-1] != p {
					seen = append(seen, p)
				}
				mu.Unlock()
			}
		}
	}()
	return func() []tune.Point {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestTuneOnRealTriton runs tritontop tune's search against the real
// server: the configurations it measures are the ones the server serves
// meanwhile, the original configuration is served again afterwards, the
// run file has every trial and the frontier, and the config.pbtxt it
// writes loads on a real server as the best trial's configuration.
func TestTuneOnRealTriton(t *testing.T) {
	t.Parallel()
	srv := interop.Start(t, interop.Options{Models: []string{identity}, Explicit: true})
	orig := servedConfig(t, srv, identity)
	dir := t.TempDir()
	o := tune.Defaults()
	o.Session.Model, o.Session.URL, o.Session.Shapes = identity, srv.GRPC, []string{"INPUT0:16"}
	o.Session.SLO.Specs = []string{"p99:2s"}
	// Short windows that agree within 50%: the host is shared, and this
	// test is about the configurations served, not the numbers.
	o.Session.MeasurementIntervalMS, o.Session.Tick, o.Session.MaxTrials = 300, 100*time.Millisecond, 4
	o.Session.StabilityPercent = 50
	o.Session.Headless, o.Session.Record = true, filepath.Join(dir, "run.jsonl")
	o.Session.Given = map[string]bool{"measurement-interval": true, "tick": true, "max-trials": true, "stability-percentage": true}
	o.Instances, o.MaxBatchSizes, o.QueueDelays, o.Preferred, o.Concurrencies = "1:2", "4,16", "0", "max", "1,4"
	o.MaxTrials, o.Output = 5, filepath.Join(dir, "config.pbtxt")
	stop := make(chan struct{})
	seen := watchConfigs(t, srv, stop)
	var stdout, stderr bytes.Buffer
	err := tune.Run(context.Background(), o, &stdout, &stderr)
	close(stop)
	if err != nil && !session.IsVerdict(err) {
		t.Fatalf("tune: %v\n%s", err, stderr.String())
	}
	if back := servedConfig(t, srv, identity); !proto.Equal(back, orig) {
		t.Errorf("after the tune the server serves %v, not the original %v", back, orig)
	}
	sum := readSummary(t, o.Session.Record)
	tr := sum.Tune
	if tr == nil || len(tr.Trials) < 3 || !tr.Restored || len(tr.Frontier) == 0 {
		t.Fatalf("the run file's tune: %+v\n%s", tr, stderr.String())
	}
	served := seen()
	for _, trial := range tr.Trials {
		p := tune.Point{Instances: trial.Config.Instances, MaxBatch: trial.Config.MaxBatchSize, Delay: trial.Config.QueueDelayUS, Preferred: tune.Preferred(trial.Config.Preferred)}
		if !trial.Baseline && !containsPoint(served, p) {
			t.Errorf("trial %+v: the server never served its configuration (it served %v)", trial.Config, served)
		}
	}
	t.Logf("%d trials, served %v; best %d\n%s", len(tr.Trials), served, tr.Best, stdout.String())
	if tr.Best < 0 {
		t.Skip("no trial met the SLO on this host: nothing written to load")
	}
	pbtxt, err := os.ReadFile(o.Output)
	if err != nil {
		t.Fatal(err)
	}
	best := tr.Trials[tr.Best].Config
	check := interop.Start(t, interop.Options{Models: []string{identity}, Edit: func(t testing.TB, repo string) {
		interop.WriteConfig(t, repo, identity, string(pbtxt))
	}})
	if p := tune.PointOf(servedConfig(t, check, identity)); p.Instances != best.Instances || p.MaxBatch != best.MaxBatchSize {
		t.Errorf("the written config.pbtxt serves %+v, the best trial was %+v:\n%s", p, best, pbtxt)
	}
}

func containsPoint(ps []tune.Point, p tune.Point) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// readSummary reads a run file's summary line.
func readSummary(t *testing.T, path string) record.Summary {
	t.Helper()
	run, err := record.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary == nil {
		t.Fatal("the run file has no summary")
	}
	return *run.Summary
}

// TestTuneInterruptedRestores: SIGINT to tritontop tune while a trial's
// configuration is served ends the run and the original configuration is
// served again, as it was before the run.
func TestTuneInterruptedRestores(t *testing.T) {
	t.Parallel()
	srv := interop.Start(t, interop.Options{Models: []string{identity}, Explicit: true})
	orig := servedConfig(t, srv, identity)
	dir := t.TempDir()
	bin := filepath.Join(dir, "tritontop")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/tritontop/tritontop/cmd/tritontop").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	args := append([]string{"tune", "--headless", "--budget-trials", "50"}, tuneArgs(srv, filepath.Join(dir, "config.pbtxt"))...)
	cmd := testproc.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	// Wait for a trial's configuration: the server serves another one.
	deadline := time.Now().Add(90 * time.Second)
	for proto.Equal(servedConfig(t, srv, identity), orig) {
		if time.Now().After(deadline) {
			t.Fatalf("no configuration loaded in 90 s:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 99) {
			t.Errorf("tritontop tune after SIGINT: %v\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("tritontop tune still runs 60 s after SIGINT:\n%s", out.String())
	}
	if back := servedConfig(t, srv, identity); !proto.Equal(back, orig) {
		t.Errorf("after SIGINT the server serves %v, not the original %v\n%s", back, orig, out.String())
	}
	if !strings.Contains(out.String(), "original configuration is loaded back") {
		t.Errorf("tritontop did not say the original is back:\n%s", out.String())
	}
}
