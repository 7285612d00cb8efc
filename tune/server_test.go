package tune

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// fakeClient serves one model's configuration and takes overrides, as
// Triton does; it notes the context of every load.
type fakeClient struct {
	mu     sync.Mutex
	cfg    *pb.ModelConfig
	loads  int
	ctxErr []error
	fail   error
}

func (f *fakeClient) ModelConfig(context.Context, string, string) (*pb.ModelConfig, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return proto.Clone(f.cfg).(*pb.ModelConfig), nil
}

func (f *fakeClient) LoadModel(ctx context.Context, _ string, config string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	f.ctxErr = append(f.ctxErr, ctx.Err())
	if f.fail != nil {
		return f.fail
	}
	cfg, err := kserve.ParseConfigJSON([]byte(config))
	if err != nil {
		return err
	}
	f.cfg = cfg
	return nil
}

// TestRestoreOnAFreshContext: the original configuration goes back even
// when the run's context has ended (a signal, a failure): the load gets a
// context of its own, with a deadline, and the server's configuration is
// checked afterwards.
func TestRestoreOnAFreshContext(t *testing.T) {
	t.Parallel()
	orig := served(t)
	fc := &fakeClient{cfg: proto.Clone(orig).(*pb.ModelConfig)}
	s := &server{client: fc, model: "identity_int32", original: orig}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.load(ctx, Point{Instances: 3, MaxBatch: 8, Delay: 500, Preferred: PreferMax}); err != nil {
		t.Fatal(err)
	}
	if p := PointOf(fc.cfg); p.Instances != 3 || p.MaxBatch != 8 {
		t.Fatalf("the trial's configuration was not loaded: %+v", p)
	}
	cancel() // Ctrl-C, SIGTERM, a failure: the run's context is over
	if err := s.restore(ctx); err != nil {
		t.Fatalf("restore after the run's end: %v", err)
	}
	if fc.ctxErr[len(fc.ctxErr)-1] != nil || !proto.Equal(fc.cfg, orig) {
		t.Errorf("restore: context %v, configuration back %v", fc.ctxErr[len(fc.ctxErr)-1], proto.Equal(fc.cfg, orig))
	}
	fc.fail = errors.New("load identity_int32: UNAVAILABLE: connection refused")
	if err := s.restore(ctx); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a failed restore: %v", err)
	}
}
