package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/sim"
)

// TestCorpus is the differential corpus (corpus_cases_test.go): every
// request goes to the real Triton and to the simulator serving the same
// model repository with the same switches, and the two answers must agree
// (interop.Compare: status, message, fields and values, timing masked).
//
// Cases with the same switches and no group share one pair of servers;
// the cases of a group (stateful: loads, shared-memory regions, sequences,
// statistics, settings) get a pair of their own and run in the table's
// order. A case marked with an explained difference must still differ (or
// its mark is stale), and the explanation must be in docs/simulator.md;
// any other difference fails the test.
func TestCorpus(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	env := corpusEnv{shmPrefix: fmt.Sprintf("/tritontop_corpus_%d_", os.Getpid())}
	cases := corpus(env)
	checkCorpus(t, cases)
	var pairs []*pairCases
	byKey := map[string]*pairCases{}
	for _, c := range cases {
		k := c.serverKey()
		p := byKey[k]
		if p == nil {
			p = &pairCases{key: k, sw: c.sw, group: c.group}
			byKey[k] = p
			pairs = append(pairs, p)
		}
		p.cases = append(p.cases, c)
	}
	var agreeing, explained, differing atomic.Int64
	t.Run("servers", func(t *testing.T) {
		for _, p := range pairs {
			t.Run(p.key, func(t *testing.T) {
				t.Parallel()
				pair := startPair(t, p.sw, p.group, env)
				for _, c := range p.cases {
					switch runCase(t, pair, c) {
					case caseAgrees:
						agreeing.Add(1)
					case caseExplained:
						explained.Add(1)
					case caseDiffers:
						differing.Add(1)
					}
				}
			})
		}
	})
	ran := agreeing.Load() + explained.Load() + differing.Load()
	summary := fmt.Sprintf("%d requests (%d HTTP, %d gRPC) on %d server pairs: %d agree, %d differ as explained, %d differ unexplained, %d not sent (no server); wall time %v",
		len(cases), countProto(cases, "http"), countProto(cases, "grpc"), len(pairs),
		agreeing.Load(), explained.Load(), differing.Load(), int64(len(cases))-ran,
		time.Since(begin).Round(time.Millisecond))
	t.Log(summary)
	// CI prints the summary after a pass run without -v.
	if path := os.Getenv("TRITONTOP_CORPUS_SUMMARY"); path != "" {
		if err := os.WriteFile(path, []byte(summary+"\n"), 0o644); err != nil {
			t.Errorf("the corpus summary: %v", err)
		}
	}
}

// pairCases are the cases of one pair of servers.
type pairCases struct {
	key   string
	sw    switches
	group string
	cases []corpusCase
}

func countProto(cases []corpusCase, proto string) int {
	n := 0
	for _, c := range cases {
		if c.req.Protocol() == proto {
			n++
		}
	}
	return n
}

// checkCorpus holds the table to its rules: unique names, at least 150
// requests, and every explained difference's reason in the docs.
func checkCorpus(t *testing.T, cases []corpusCase) {
	t.Helper()
	if len(cases) < 150 {
		t.Errorf("the corpus has %d requests, want at least 150", len(cases))
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "simulator.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Join(strings.Fields(string(doc)), " ")
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Errorf("two cases are named %q", c.name)
		}
		seen[c.name] = true
		if c.known == "" {
			continue
		}
		reason, ok := explainedDiffs[c.known]
		if !ok {
			t.Errorf("case %q: no explained difference %q", c.name, c.known)
		} else if !strings.Contains(docs, reason) {
			t.Errorf("case %q: docs/simulator.md does not say %q", c.name, reason)
		}
	}
}

// pair is a real Triton and a simulator serving the same repository.
type pair struct {
	real, sim interop.Endpoints
}

// startPair starts the real server with the switches, and the simulator
// in-process on the same repository copy with the same switches.
func startPair(t *testing.T, sw switches, group string, env corpusEnv) *pair {
	if group != "" && strings.HasPrefix(group, "shm") {
		makeShm(t, env.shmKey(group), shmSize)
	}
	real := interop.Start(t, interop.Options{Explicit: sw.explicit, AllowClientShm: sw.shm, Edit: addCorpusModels})
	repo, err := sim.LoadRepositoryDir(real.Repo)
	if err != nil {
		t.Fatal(err)
	}
	opts := sim.EngineOptions{AllowClientShm: sw.shm}
	if sw.explicit {
		opts.ModelControl, opts.StartupModels = sim.ModelControlExplicit, []string{"*"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := sim.Start(ctx, sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: repo, Engine: opts,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &pair{real: endpoints(t, real.HTTP, real.GRPC), sim: endpoints(t, s.HTTPAddr(), s.GRPCAddr())}
}

func endpoints(t *testing.T, httpAddr, grpcAddr string) interop.Endpoints {
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	client := &http.Client{Timeout: 20 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	return interop.Endpoints{HTTP: httpAddr, Client: client, GRPC: conn}
}

// A case's outcome.
const (
	caseAgrees = iota
	caseExplained
	caseDiffers
)

// runCase sends c to both servers and compares their answers.
func runCase(t *testing.T, p *pair, c corpusCase) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ra, err := c.req.Send(ctx, p.real)
	for settle := time.Now().Add(10 * time.Second); err == nil && c.settle != "" &&
		strings.Contains(showAnswer(ra), c.settle) && time.Now().Before(settle); {
		time.Sleep(20 * time.Millisecond)
		ra, err = c.req.Send(ctx, p.real)
	}
	if err != nil {
		t.Errorf("%s: the real server: %v", c.name, err)
		return caseDiffers
	}
	sa, err := c.req.Send(ctx, p.sim)
	if err != nil {
		t.Errorf("%s: the simulator: %v", c.name, err)
		return caseDiffers
	}
	diffs := interop.Compare(ra, sa)
	switch {
	case len(diffs) == 0 && c.known != "":
		t.Errorf("%s: explained as %q, but the answers agree now: remove the mark (and the docs' entry if it was the last)\n  request: %s\n  answer: %s",
			c.name, c.known, interop.Describe(c.req), showAnswer(ra))
		return caseDiffers
	case len(diffs) == 0:
		return caseAgrees
	case c.known != "":
		t.Logf("%s: explained difference (%s): %s", c.name, c.known, strings.Join(diffs, "; "))
		return caseExplained
	}
	t.Errorf("%s: the simulator answers differently\n  request: %s\n  real: %s\n  sim:  %s\n  - %s",
		c.name, interop.Describe(c.req), showAnswer(ra), showAnswer(sa), strings.Join(diffs, "\n  - "))
	return caseDiffers
}

func showAnswer(a interop.Answer) string {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Sprint(a)
	}
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// shmSize is the size of each shared-memory group's POSIX object.
const shmSize = 8192

// makeShm creates the POSIX shared-memory object key (/dev/shm on Linux)
// of size bytes, its first 64 bytes the INT32 values 1..16, and removes
// it when t ends.
func makeShm(t *testing.T, key string, size int) {
	t.Helper()
	path := filepath.Join("/dev/shm", strings.TrimPrefix(key, "/"))
	b := make([]byte, size)
	copy(b, i32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Skipf("no POSIX shared memory here: %v", err)
	}
	t.Cleanup(func() { os.Remove(path) })
}
