//go:build linux

package triton_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// failingRegistrar passes registrations to a real client until the
// failAt-th, which it refuses.
type failingRegistrar struct {
	triton.SharedMemoryClient
	n, failAt int
}

func (f *failingRegistrar) RegisterSystemSharedMemory(ctx context.Context, name, key string, off, size uint64) error {
	f.n++
	if f.n == f.failAt {
		return errors.New("refused for the test")
	}
	return f.SharedMemoryClient.RegisterSystemSharedMemory(ctx, name, key, off, size)
}

// TestPlaceInSharedMemory places simple's requests in regions of a real
// simulator over gRPC and HTTP, runs them, and checks the sums come back
// through the output region's registration (the server counts them), then
// that a placement failing half way unregisters what it registered and
// leaves nothing in /dev/shm.
func TestPlaceInSharedMemory(t *testing.T) {
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.ExampleRepository(), Engine: sim.EngineOptions{AllowClientShm: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	litter := func() []string {
		m, _ := filepath.Glob(fmt.Sprintf("/dev/shm/tritontop_%d_*", os.Getpid()))
		return m
	}
	for _, proto := range []string{"grpc", "http"} {
		addr := srv.GRPCAddr()
		if proto == "http" {
			addr = srv.HTTPAddr()
		}
		c, err := triton.Dial(ctx, addr, triton.Options{Protocol: proto})
		if err != nil {
			t.Fatal(err)
		}
		md, _ := c.ModelMetadata(ctx, "simple", "")
		cfg, _ := c.ModelConfig(ctx, "simple", "")
		reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{Data: triton.InputDataZero})
		if err != nil {
			t.Fatal(err)
		}
		set, err := triton.PlaceInSharedMemory(ctx, c.(triton.SharedMemoryClient), reqs, []string{"OUTPUT0", "OUTPUT1"}, 64, triton.NewShmPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if l := litter(); len(l) != 0 {
			t.Errorf("%s: keys still linked after registration: %v", proto, l)
		}
		p, err := c.Prepare(reqs[0])
		if err != nil {
			t.Fatal(err)
		}
		const n = 5
		for range n {
			if _, err := c.Send(ctx, p); err != nil {
				t.Fatalf("%s: %v", proto, err)
			}
		}
		regions, _ := srv.Engine().SystemSharedMemoryStatus("")
		if len(regions) != set.Regions() || set.Regions() != 3 {
			t.Errorf("%s: server has %d regions, the set %d, want 3", proto, len(regions), set.Regions())
		}
		if err := set.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if regions, _ := srv.Engine().SystemSharedMemoryStatus(""); len(regions) != 0 {
			t.Errorf("%s: %d regions registered after Close", proto, len(regions))
		}
		// A placement whose third registration fails.
		reqs, _ = triton.BuildRequests(md, cfg, triton.InputOptions{Data: triton.InputDataZero})
		_, err = triton.PlaceInSharedMemory(ctx, &failingRegistrar{SharedMemoryClient: c.(triton.SharedMemoryClient), failAt: 3}, reqs,
			[]string{"OUTPUT0", "OUTPUT1"}, 64, triton.NewShmPrefix())
		var reg *triton.ShmRegisterError
		if !errors.As(err, &reg) {
			t.Errorf("%s: a refused registration gave %v", proto, err)
		}
		if regions, _ := srv.Engine().SystemSharedMemoryStatus(""); len(regions) != 0 {
			t.Errorf("%s: %d regions left registered by a failed placement", proto, len(regions))
		}
		if l := litter(); len(l) != 0 {
			t.Errorf("%s: left in /dev/shm by a failed placement: %v", proto, l)
		}
		c.Close()
	}
	st, _ := srv.Engine().ModelStatistics("simple", "")
	if got := st.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount(); got != 10 {
		t.Errorf("the server counts %d requests, the client sent 10", got)
	}
}
