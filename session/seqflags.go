package session

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/pb"
)

// seqFlags are perf_analyzer's flags for stateful models (a config with
// sequence_batching), with its names, defaults and meanings.
type SequenceConfig struct {
	Length    int
	Variation float64
	IDRange   string
	Count     int
	Serial    bool

	// From --sequence-id-range: the first id and how many there are.
	startID, ids uint64
}

// maxSequenceLength bounds --sequence-length: a sequence is a conversation
// or a stream of chunks, not a run.
const maxSequenceLength = 1_000_000

// sequenceFlagNames are the flags that only a stateful model takes.
var sequenceFlagNames = []string{"sequence-length", "sequence-length-variation", "sequence-id-range", "num-of-sequences", "serial-sequences"}

// checkSequenceFlags reads --sequence-id-range as perf_analyzer does
// (START alone keeps the default number of ids) and refuses a range with
// fewer ids than sequences may be live at once, which would make two of
// them share an id: maxLive is the highest concurrency the run asks for,
// or --num-of-sequences in open loop.
func checkSequenceFlags(f *Config, maxLive int, open bool) error {
	s := &f.Sequences
	s.startID, s.ids = 1, driver.DefaultSequenceIDRange
	if s.IDRange == "" {
		return nil
	}
	bad := func(why string) error {
		return fmt.Errorf("bad --sequence-id-range %s: %s", textsafe.Quote(s.IDRange), why)
	}
	parts := strings.Split(s.IDRange, ":")
	if len(parts) > 2 {
		return bad("use START[:END], END excluded, e.g. 1:1000")
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
		if err != nil || v > math.MaxInt64 {
			return bad(fmt.Sprintf("%s is not a whole number from 1 to %d (Triton's sequence_id is an int64)", textsafe.Quote(p), int64(math.MaxInt64)))
		}
		vals[i] = v
	}
	s.startID = vals[0]
	switch {
	case s.startID == 0:
		return bad("correlation id 0 names no sequence: ids start at 1")
	case len(vals) == 2 && vals[1] <= s.startID:
		return bad("END must be above START (END is excluded)")
	case len(vals) == 2:
		s.ids = vals[1] - s.startID
	default:
		s.ids = min(s.ids, math.MaxInt64-s.startID+1)
	}
	if s.ids < uint64(maxLive) {
		what := fmt.Sprintf("concurrency %d", maxLive)
		if open {
			what = fmt.Sprintf("--num-of-sequences %d", maxLive)
		}
		return bad(fmt.Sprintf("%d ids for up to %d sequences at once (%s): sequences would share ids; give at least %d",
			s.ids, maxLive, what, maxLive))
	}
	return nil
}

// sequenceOptions are the driver's sequence options for the model: nil
// for a model without sequence batching, which the sequence flags are
// not for. Errors are one line each, for a usage error.
func sequenceOptions(f *Config, cfg *pb.ModelConfig) (*driver.SequenceOptions, error) {
	if cfg.GetSequenceBatching() == nil {
		for _, name := range sequenceFlagNames {
			if f.Given[name] {
				return nil, fmt.Errorf("--%s is for stateful models, and model %s has no sequence batching in its config: drop it", name, textsafe.Quote(f.Model))
			}
		}
		return nil, nil
	}
	if f.BatchSize > 1 {
		return nil, fmt.Errorf("model %s has sequence batching: Triton takes a sequence's requests one at a time, so use -b 1", textsafe.Quote(f.Model))
	}
	for _, s := range f.LLM.RequestParameters {
		switch name, _, _ := strings.Cut(s, ":"); name {
		case triton.SequenceIDParameter, triton.SequenceStartParameter, triton.SequenceEndParameter:
			return nil, fmt.Errorf("--request-parameter %s: tritontop sets it on every request of model %s's sequences; drop it", name, textsafe.Quote(f.Model))
		}
	}
	return &driver.SequenceOptions{
		Length: f.Sequences.Length, Variation: f.Sequences.Variation, StartID: f.Sequences.startID, IDRange: f.Sequences.ids,
		Count: f.Sequences.Count, Serial: f.Sequences.Serial,
	}, nil
}
