package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/tune"
)

// bestRe is the tune pane's best line once a trial met the SLO; trialRe
// its title's trial under way.
var (
	bestRe  = regexp.MustCompile(`best \d+i b\d+ d\d+µs @\d+`)
	trialRe = regexp.MustCompile(`Tune · trial (\d+) `)
)

// TestTuneDashboardInTmux runs tritontop tune in a real terminal against
// the simulator in explicit model control: the dashboard's tune pane
// shows the trials as they go, the configuration under way and the best
// so far; q ends the run and the model serves its own configuration
// again.
func TestTuneDashboardInTmux(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	m := batchingModel("tuned", 1, 8, 2, 0.5)
	m.InstanceGroups[0].GPUs = []int{0}
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.Repository{GPUs: []sim.GPUSpec{{}}, Models: []sim.ModelSpec{m}},
		Engine: sim.EngineOptions{MetricsInterval: 250 * time.Millisecond,
			ModelControl: sim.ModelControlExplicit, StartupModels: []string{"*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client, err := triton.Dial(context.Background(), srv.GRPCAddr(), triton.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	orig, err := client.ModelConfig(context.Background(), "tuned", "")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "config.pbtxt")
	tm := newTerminal(t, 120, 40, bin+" tune -m tuned -u "+srv.GRPCAddr()+" --metrics-url http://"+srv.MetricsAddr()+"/metrics --slo p99:200ms --instances 1:2 --max-batch-sizes 4,8,16 "+
		"--queue-delays 0 --preferred-batch-sizes max --concurrencies 4,16,64 -p 300 --tick 100ms -s 50 -o "+out)
	screen, ok := tm.waitFor(60*time.Second, func() {}, func(s string) bool {
		m := trialRe.FindStringSubmatch(s)
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n >= 3 && bestRe.MatchString(s) && strings.Contains(s, "now  ")
	})
	if !ok {
		t.Fatalf("the tune pane never showed a third trial after a best: screen:\n%s", screen)
	}
	for _, want := range []string{"┤", "★"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the tune pane lacks %q:\n%s", want, screen)
		}
	}
	tm.quitOK()
	// The simulator's model is described in JSON: loaded back through an
	// override it gains what Triton's normalization fills in, so the
	// configuration is compared in what tune changes.
	back, err := client.ModelConfig(context.Background(), "tuned", "")
	if err != nil || tune.PointOf(back) != tune.PointOf(orig) || back.GetInstanceGroup()[0].GetCount() != 1 {
		t.Errorf("after the run the model serves %v (%v), not its own %v", back, err, orig)
	}
}
