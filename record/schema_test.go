package record

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tritontop/tritontop/triton/pb"
)

func TestProtoJSONUsesProtoNames(t *testing.T) {
	cfg := &pb.ModelConfig{
		Name:             "resnet50",
		MaxBatchSize:     32,
		SchedulingChoice: &pb.ModelConfig_DynamicBatching{DynamicBatching: &pb.ModelDynamicBatching{PreferredBatchSize: []int32{8, 16}}},
	}
	raw, err := ProtoJSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(raw, "\n") {
		t.Errorf("not one line: %s", raw)
	}
	var back struct {
		Name            string `json:"name"`
		MaxBatchSize    int    `json:"max_batch_size"`
		DynamicBatching struct {
			PreferredBatchSize []int `json:"preferred_batch_size"`
		} `json:"dynamic_batching"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Name != "resnet50" || back.MaxBatchSize != 32 || len(back.DynamicBatching.PreferredBatchSize) != 2 {
		t.Errorf("ProtoJSON = %s", raw)
	}
	var none *pb.ModelConfig
	if raw, err := ProtoJSON(none); raw != nil || err != nil {
		t.Errorf("ProtoJSON(nil config) = %s, %v; want nil, nil", raw, err)
	}
}
