package interop_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/interop"
	"github.com/tritontop/tritontop/triton"
)

// TestSharedMemoryRegistration places identity_int32's requests in system
// shared memory (package triton's placement, what --shared-memory system
// does) on a real Triton, over gRPC and HTTP:
//
//   - started without --allow-client-shm=true, Triton refuses the first
//     region (UNIMPLEMENTED, HTTP 501); the error keeps the server's
//     message and its hint says to start the server with
//     --allow-client-shm=true, not that the server must be on this host;
//   - started with it, the placement registers every region and Triton
//     serves requests from them (its own count);
//   - a region whose key the server cannot open (the key is renamed on its
//     way, as for a server that does not see this host's /dev/shm) gets
//     Triton's "Unable to open shared memory region", and only then the
//     hint about the host.
//
// No placement, failed or not, leaves a file in /dev/shm.
func TestSharedMemoryRegistration(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	refusing := interop.Start(t, interop.Options{Models: []string{identity}})
	allowing := interop.Start(t, interop.Options{Models: []string{identity}, AllowClientShm: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := 100
	for _, proto := range []string{"grpc", "http"} {
		n++
		err := place(ctx, t, refusing, proto, n, nil, 0)
		var reg *triton.ShmRegisterError
		if !errors.As(err, &reg) {
			t.Fatalf("%s, without --allow-client-shm: %v", proto, err)
		}
		msg := err.Error()
		t.Logf("%s, without --allow-client-shm: %s", proto, msg)
		if triton.ErrorCode(err) != codes.Unimplemented ||
			!strings.Contains(msg, "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.") ||
			!strings.HasSuffix(msg, ": start the server with --allow-client-shm=true") || strings.Contains(msg, "this host") {
			t.Errorf("%s, without --allow-client-shm: %s", proto, msg)
		}

		n++
		before := allowing.Statistics(t, identity)
		if err := place(ctx, t, allowing, proto, n, nil, 5); err != nil {
			t.Fatalf("%s, with --allow-client-shm: %v", proto, err)
		}
		// Triton counts a request once its backend has sent the response
		// (the identity backend reports statistics after it), so the
		// count may trail the last answer a moment.
		var d interop.ModelStats
		eventually(10*time.Second, func() bool {
			d = interop.Delta(before, allowing.Statistics(t, identity))
			return d.Inference.Success.Count+d.Inference.Fail.Count >= 5
		})
		if d.Inference.Success.Count != 5 || d.Inference.Fail.Count != 0 {
			t.Errorf("%s, with --allow-client-shm: Triton served %d requests from shared memory (%d failed), want 5", proto, d.Inference.Success.Count, d.Inference.Fail.Count)
		}

		n++
		err = place(ctx, t, allowing, proto, n, func(key string) string { return key + "_elsewhere" }, 0)
		msg = fmt.Sprint(err)
		t.Logf("%s, a key the server cannot open: %s", proto, msg)
		if !errors.As(err, &reg) || !strings.Contains(msg, "Unable to open shared memory region: '/") ||
			!strings.Contains(msg, "needs the server on this host") {
			t.Errorf("%s, a key the server cannot open: %s", proto, msg)
		}
	}
	if l, _ := filepath.Glob(fmt.Sprintf("/dev/shm/tritontop_%d_*", os.Getpid())); len(l) != 0 {
		t.Errorf("left in /dev/shm: %v", l)
	}
	t.Logf("wall time %v", time.Since(begin).Round(time.Millisecond))
}

// place puts identity_int32's request (INPUT0 of 16 elements) and its
// output in shared memory on srv over proto, with keys renamed by rekey on
// their way to the server (nil: as made), sends it sends times, and ends
// the placement.
func place(ctx context.Context, t *testing.T, srv *interop.Server, proto string, n int, rekey func(string) string, sends int) error {
	t.Helper()
	addr := srv.GRPC
	if proto == "http" {
		addr = srv.HTTP
	}
	c, err := triton.Dial(ctx, addr, triton.Options{Protocol: proto})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	md, err := c.ModelMetadata(ctx, identity, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.ModelConfig(ctx, identity, "")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{Data: triton.InputDataZero, Shapes: map[string][]int64{"INPUT0": {16}}})
	if err != nil {
		t.Fatal(err)
	}
	var reg triton.SharedMemoryClient = c.(triton.SharedMemoryClient)
	if rekey != nil {
		reg = rekeyed{reg, rekey}
	}
	set, err := triton.PlaceInSharedMemory(ctx, reg, reqs, []string{"OUTPUT0"}, 64, triton.NewShmPrefix())
	if err != nil {
		return err
	}
	defer func() {
		if err := set.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	p, err := c.Prepare(reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	for range sends {
		if _, err := c.Send(ctx, p); err != nil {
			t.Fatalf("%s: a request from shared memory: %v", proto, err)
		}
	}
	return nil
}

// rekeyed registers regions under keys renamed by rekey.
type rekeyed struct {
	triton.SharedMemoryClient
	rekey func(string) string
}

func (r rekeyed) RegisterSystemSharedMemory(ctx context.Context, name, key string, off, size uint64) error {
	return r.SharedMemoryClient.RegisterSystemSharedMemory(ctx, name, r.rekey(key), off, size)
}
