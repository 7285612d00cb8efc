package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestReplicasDashboardMarksDown runs the dashboard in a real terminal
// against two simulator processes and kills one: its row says down, the
// other's up.
func TestReplicasDashboardMarksDown(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	a, b := startReplica(t, bin), startReplica(t, bin)
	tm := newTerminal(t, 120, 40, bin+" -m resnet50 -u "+a.grpc+" -u "+b.grpc+" --metrics-url http://"+a.metrics+
		"/metrics --metrics-url http://"+b.metrics+"/metrics --concurrency 8")
	// The replica's row in the Replicas pane: the URL and a space (the GPU
	// pane names each GPU URL/index).
	rowOf := func(screen, url string) string {
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, url+" ") {
				return l
			}
		}
		return ""
	}
	if screen, ok := tm.waitFor(20*time.Second, func() {}, func(s string) bool {
		return strings.Contains(s, "Replicas · 2 of 2 in") && strings.Contains(rowOf(s, b.grpc), " up ")
	}); !ok {
		t.Fatalf("both replicas up: not within 20 s; screen:\n%s", screen)
	}
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	b.cmd.Wait()
	screen, ok := tm.waitFor(20*time.Second, func() {}, func(s string) bool {
		return strings.Contains(s, "Replicas · 1 of 2 in") && strings.Contains(rowOf(s, b.grpc), " down ")
	})
	if !ok {
		t.Fatalf("the killed replica down: not within 20 s; screen:\n%s", screen)
	}
	t.Logf("the dashboard said down %v after the kill", time.Since(killed).Round(time.Millisecond))
	if !strings.Contains(rowOf(screen, a.grpc), " up ") {
		t.Errorf("the replica left is not up: %q", rowOf(screen, a.grpc))
	}
	tm.quitOK()
}

// simReplica is a `tritontop sim` process serving one replica.
type simReplica struct {
	cmd           *exec.Cmd
	grpc, metrics string
}

// startReplica starts `tritontop sim` on free ports.
func startReplica(t *testing.T, bin string) simReplica {
	t.Helper()
	cmd, addrs, _ := startSimCommand(t, bin, "--metrics-interval-ms", "250")
	return simReplica{cmd: cmd, grpc: addrs["gRPC"], metrics: addrs["metrics"]}
}
