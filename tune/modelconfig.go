package tune

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// PointOf is the configuration a model's config has: the count of its
// first instance group (1 when it has none), max_batch_size and its
// dynamic batcher's settings.
func PointOf(cfg *pb.ModelConfig) Point {
	p := Point{Instances: 1, MaxBatch: int(cfg.GetMaxBatchSize())}
	if g := cfg.GetInstanceGroup(); len(g) > 0 {
		p.Instances = max(1, int(g[0].GetCount()))
	}
	if db := cfg.GetDynamicBatching(); db != nil {
		p.Delay = int(db.GetMaxQueueDelayMicroseconds())
		p.Preferred = PreferMax
		if sz := db.GetPreferredBatchSize(); len(sz) == 2 && int(sz[1]) == p.MaxBatch && int(sz[0]) == p.MaxBatch/2 {
			p.Preferred = PreferHalf
		}
	}
	return p
}

// Configure is the model's configuration with p applied: every instance
// group's count, max_batch_size, and a dynamic batcher with p's delay and
// preferred sizes (the original's other batcher settings, such as queue
// policies, kept), or none when p does not batch. Everything else is the
// original's.
func Configure(orig *pb.ModelConfig, p Point) *pb.ModelConfig {
	c := proto.Clone(orig).(*pb.ModelConfig)
	if len(c.InstanceGroup) == 0 {
		c.InstanceGroup = []*pb.ModelInstanceGroup{{}}
	}
	for _, g := range c.InstanceGroup {
		g.Count = int32(p.Instances)
	}
	c.MaxBatchSize = int32(p.MaxBatch)
	if !p.Batcher() {
		if c.GetDynamicBatching() != nil {
			c.SchedulingChoice = nil
		}
		return c
	}
	db := proto.Clone(orig.GetDynamicBatching()).(*pb.ModelDynamicBatching)
	if orig.GetDynamicBatching() == nil {
		db = &pb.ModelDynamicBatching{}
	}
	db.PreferredBatchSize = p.Preferred.sizes(p.MaxBatch)
	db.MaxQueueDelayMicroseconds = uint64(p.Delay)
	c.SchedulingChoice = &pb.ModelConfig_DynamicBatching{DynamicBatching: db}
	return c
}

// OverrideJSON is cfg as the repository API's "config" load parameter
// takes it: JSON with Triton's field names.
func OverrideJSON(cfg *pb.ModelConfig) (string, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("the configuration as JSON: %w", err)
	}
	return string(b), nil
}

// PBTxt is cfg as a model repository's config.pbtxt: protobuf text format,
// which Triton reads, after a comment of what it is.
func PBTxt(cfg *pb.ModelConfig, comment string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(comment), "\n") {
		if line != "" {
			b.WriteString("# " + line + "\n")
		}
	}
	b.WriteString(textFormat(cfg.ProtoReflect()))
	return b.String()
}

// Tunable says why a model's configuration is not one the search can
// vary, or nil: an ensemble (its composing models have the
// configurations), a stateful model (the sequence batcher holds its
// sequences on instances) or a decoupled one (an LLM's capacity is
// tokens, not requests).
func Tunable(cfg *pb.ModelConfig) error {
	switch {
	case cfg.GetEnsembleScheduling() != nil || cfg.GetPlatform() == "ensemble":
		return errors.New("it is an ensemble: tune its composing models one by one")
	case cfg.GetSequenceBatching() != nil:
		return errors.New("it is a stateful model (sequence batching): tune searches the dynamic batcher's settings")
	case cfg.GetModelTransactionPolicy().GetDecoupled():
		return errors.New("it is decoupled: tune measures requests per second, not streamed responses")
	}
	return nil
}
