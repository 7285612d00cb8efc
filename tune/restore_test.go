package tune_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/tune"
)

// TestFailedRunRestores: a run that fails after its trials changed the
// model's configuration (its config.pbtxt's folder went away, so the file
// cannot be written) ends with that error, and the model serves its own
// configuration again: the restore does not depend on how the run ends.
func TestFailedRunRestores(t *testing.T) {
	t.Parallel()
	p := profiles[0]
	srv := p.serve(t)
	client, err := triton.Dial(context.Background(), srv.GRPCAddr(), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	orig, err := client.ModelConfig(context.Background(), p.name, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	o := tune.Defaults()
	c := &o.Session
	c.Model, c.URL, c.SLO.Specs, c.Headless = p.name, srv.GRPCAddr(), []string{"p99:500ms"}, true
	c.MeasurementIntervalMS, c.Tick, c.StabilityPercent = 200, 50*time.Millisecond, 50
	c.Given = map[string]bool{"measurement-interval": true, "tick": true, "stability-percentage": true}
	o.Instances, o.MaxBatchSizes, o.QueueDelays, o.Preferred, o.Concurrencies = "1:2", "4,16", "0", "max", "4,16"
	o.Output = filepath.Join(dir, "config.pbtxt")
	done := make(chan error, 1)
	var stdout, stderr bytes.Buffer
	go func() { done <- tune.Run(context.Background(), o, &stdout, &stderr) }()
	// Once a trial's configuration is served, the output's folder goes.
	deadline := time.Now().Add(30 * time.Second)
	for {
		cfg, err := client.ModelConfig(context.Background(), p.name, "")
		if err == nil && tune.PointOf(cfg) != tune.PointOf(orig) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no trial changed the configuration in 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
	}
	if err == nil || !strings.Contains(err.Error(), "config.pbtxt") {
		t.Errorf("the run's error: %v, want the config.pbtxt's\n%s", err, stderr.String())
	}
	back, err := client.ModelConfig(context.Background(), p.name, "")
	if err != nil || tune.PointOf(back) != tune.PointOf(orig) {
		t.Errorf("after the failed run the model serves %v (%v), not its own %v", tune.PointOf(back), err, tune.PointOf(orig))
	}
	if !strings.Contains(stderr.String(), "original configuration is loaded back") {
		t.Errorf("the run did not say the original is back:\n%s", stderr.String())
	}
}
