package tune

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/usage"
	"github.com/tritontop/tritontop/session"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// Client is what tune needs of a server: the model's configuration, and
// the repository API to load one; a triton.Client is one.
type Client interface {
	ModelConfig(ctx context.Context, model, version string) (*pb.ModelConfig, error)
	LoadModel(ctx context.Context, model, config string) error
}

// server loads the model's configurations and puts the original back.
type server struct {
	client   Client
	model    string
	version  string
	original *pb.ModelConfig
}

// RestoreTimeout bounds putting the original configuration back: it runs
// on a context of its own, after the run's has ended (a signal, a
// failure), so that the model is not left as a trial configured it.
const RestoreTimeout = 2 * time.Minute

// modelName is the model the run names: -m once, without @load.
func modelName(c *session.Config) (string, error) {
	name := c.Model
	if name == "" && len(c.ModelArgs) == 1 {
		name = c.ModelArgs[0]
	}
	if strings.Contains(name, "@") {
		return "", usageErr("tritontop tune chooses the load itself: drop the @load of -m %s", name)
	}
	return name, nil
}

// serverURL is the server the run names, with the command's default.
func serverURL(c *session.Config) string {
	switch {
	case c.URL != "":
		return c.URL
	case len(c.URLs) == 1:
		return c.URLs[0]
	case c.Protocol == "http":
		return "localhost:8000"
	}
	return "localhost:8001"
}

// dial connects tune's own client, for the repository API.
func dial(ctx context.Context, c *session.Config) (triton.Client, error) {
	opts := triton.Options{Protocol: c.Protocol, ConnectTimeout: c.ConnectTimeout}
	if len(c.Headers) > 0 {
		opts.Headers = map[string]string{}
		for _, h := range c.Headers {
			k, v, _ := strings.Cut(h, ":")
			opts.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if c.SSL || c.SSLCA != "" || c.SSLCert != "" || c.SSLKey != "" {
		opts.TLS = &triton.TLSOptions{CAFile: c.SSLCA, CertFile: c.SSLCert, KeyFile: c.SSLKey}
	}
	return triton.Dial(ctx, serverURL(c), opts)
}

// readOriginal reads the model's configuration as the server serves it,
// and checks that tune can vary it.
func (s *server) readOriginal(ctx context.Context) error {
	cfg, err := s.client.ModelConfig(ctx, s.model, s.version)
	if err != nil {
		return fmt.Errorf("config of model %q: %w", s.model, err)
	}
	if err := Tunable(cfg); err != nil {
		return usage.Error{Err: fmt.Errorf("model %q cannot be tuned: %w", s.model, err)}
	}
	s.original = cfg
	return nil
}

// probe loads the model with its own configuration as an override: the
// server must take overrides before anything is measured (a server
// outside explicit model control refuses it with triton.ErrNotExplicit).
// Triton takes the configuration the model already serves without
// reloading it (its statistics go on).
func (s *server) probe(ctx context.Context) error {
	js, err := OverrideJSON(s.original)
	if err != nil {
		return err
	}
	if err := s.client.LoadModel(ctx, s.model, js); err != nil {
		return fmt.Errorf("tritontop tune loads configurations through the repository API, which the server refused: %w", err)
	}
	return nil
}

// load loads the model with configuration p of the original.
func (s *server) load(ctx context.Context, p Point) error {
	js, err := OverrideJSON(Configure(s.original, p))
	if err != nil {
		return err
	}
	return s.client.LoadModel(ctx, s.model, js)
}

// restore loads the original configuration back, on a context of its own
// (ctx's values, not its end), and checks that the server serves it
// again.
func (s *server) restore(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RestoreTimeout)
	defer cancel()
	js, err := OverrideJSON(s.original)
	if err != nil {
		return err
	}
	if err := s.client.LoadModel(ctx, s.model, js); err != nil {
		return err
	}
	back, err := s.client.ModelConfig(ctx, s.model, s.version)
	if err != nil {
		return fmt.Errorf("config of model %q after the restore: %w", s.model, err)
	}
	if !sameTuned(back, s.original) {
		return fmt.Errorf("the server reports %s after loading the original %s back", PointOf(back), PointOf(s.original))
	}
	return nil
}

// sameTuned reports whether two configurations agree in what tune
// changes: every instance group (kind, count, GPUs), max_batch_size and
// the dynamic batcher's delay and preferred sizes (none and
// [max_batch_size] alike: Triton fills in the one for the other). The
// real Triton serves the original back field for field; a simulated model
// described in JSON comes back with what Triton's normalization adds.
func sameTuned(a, b *pb.ModelConfig) bool {
	if PointOf(a) != PointOf(b) || len(a.GetInstanceGroup()) != len(b.GetInstanceGroup()) {
		return false
	}
	for i, g := range a.GetInstanceGroup() {
		h := b.GetInstanceGroup()[i]
		if g.GetKind() != h.GetKind() || g.GetCount() != h.GetCount() || !slices.Equal(g.GetGpus(), h.GetGpus()) {
			return false
		}
	}
	return true
}
