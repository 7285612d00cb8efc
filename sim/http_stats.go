package sim

import (
	"net/http"

	"github.com/tritontop/tritontop/triton/pb"
)

// The statistics JSON Triton writes itself: uint64 values as JSON numbers
// and keys in core's order (struct field order here).

type durationJSON struct {
	Count uint64 `json:"count"`
	Ns    uint64 `json:"ns"`
}

func durationOf(d *pb.StatisticDuration) durationJSON {
	return durationJSON{Count: d.GetCount(), Ns: d.GetNs()}
}

type inferStatsJSON struct {
	Success       durationJSON `json:"success"`
	Fail          durationJSON `json:"fail"`
	Queue         durationJSON `json:"queue"`
	ComputeInput  durationJSON `json:"compute_input"`
	ComputeInfer  durationJSON `json:"compute_infer"`
	ComputeOutput durationJSON `json:"compute_output"`
	CacheHit      durationJSON `json:"cache_hit"`
	CacheMiss     durationJSON `json:"cache_miss"`
}

type responseStatsJSON struct {
	ComputeInfer  durationJSON `json:"compute_infer"`
	ComputeOutput durationJSON `json:"compute_output"`
	Success       durationJSON `json:"success"`
	Fail          durationJSON `json:"fail"`
	EmptyResponse durationJSON `json:"empty_response"`
	Cancel        durationJSON `json:"cancel"`
}

type batchStatsJSON struct {
	BatchSize     uint64       `json:"batch_size"`
	ComputeInput  durationJSON `json:"compute_input"`
	ComputeInfer  durationJSON `json:"compute_infer"`
	ComputeOutput durationJSON `json:"compute_output"`
}

type memoryUsageJSON struct {
	Type     string `json:"type"`
	ID       int64  `json:"id"`
	ByteSize uint64 `json:"byte_size"`
}

type modelStatsJSON struct {
	Name           string                       `json:"name"`
	Version        string                       `json:"version"`
	LastInference  uint64                       `json:"last_inference"`
	InferenceCount uint64                       `json:"inference_count"`
	ExecutionCount uint64                       `json:"execution_count"`
	InferenceStats inferStatsJSON               `json:"inference_stats"`
	ResponseStats  map[string]responseStatsJSON `json:"response_stats"`
	BatchStats     []batchStatsJSON             `json:"batch_stats"`
	MemoryUsage    []memoryUsageJSON            `json:"memory_usage"`
}

type statsJSON struct {
	ModelStats []modelStatsJSON `json:"model_stats"`
}

func statisticsJSON(resp *pb.ModelStatisticsResponse) statsJSON {
	out := statsJSON{ModelStats: make([]modelStatsJSON, 0, len(resp.GetModelStats()))}
	for _, m := range resp.GetModelStats() {
		is := m.GetInferenceStats()
		ms := modelStatsJSON{
			Name:           m.GetName(),
			Version:        m.GetVersion(),
			LastInference:  m.GetLastInference(),
			InferenceCount: m.GetInferenceCount(),
			ExecutionCount: m.GetExecutionCount(),
			InferenceStats: inferStatsJSON{
				Success:       durationOf(is.GetSuccess()),
				Fail:          durationOf(is.GetFail()),
				Queue:         durationOf(is.GetQueue()),
				ComputeInput:  durationOf(is.GetComputeInput()),
				ComputeInfer:  durationOf(is.GetComputeInfer()),
				ComputeOutput: durationOf(is.GetComputeOutput()),
				CacheHit:      durationOf(is.GetCacheHit()),
				CacheMiss:     durationOf(is.GetCacheMiss()),
			},
			ResponseStats: make(map[string]responseStatsJSON, len(m.GetResponseStats())),
			BatchStats:    make([]batchStatsJSON, 0, len(m.GetBatchStats())),
			MemoryUsage:   make([]memoryUsageJSON, 0, len(m.GetMemoryUsage())),
		}
		for k, r := range m.GetResponseStats() {
			ms.ResponseStats[k] = responseStatsJSON{
				ComputeInfer:  durationOf(r.GetComputeInfer()),
				ComputeOutput: durationOf(r.GetComputeOutput()),
				Success:       durationOf(r.GetSuccess()),
				Fail:          durationOf(r.GetFail()),
				EmptyResponse: durationOf(r.GetEmptyResponse()),
				Cancel:        durationOf(r.GetCancel()),
			}
		}
		for _, b := range m.GetBatchStats() {
			ms.BatchStats = append(ms.BatchStats, batchStatsJSON{
				BatchSize:     b.GetBatchSize(),
				ComputeInput:  durationOf(b.GetComputeInput()),
				ComputeInfer:  durationOf(b.GetComputeInfer()),
				ComputeOutput: durationOf(b.GetComputeOutput()),
			})
		}
		for _, u := range m.GetMemoryUsage() {
			ms.MemoryUsage = append(ms.MemoryUsage, memoryUsageJSON{Type: u.GetType(), ID: u.GetId(), ByteSize: u.GetByteSize()})
		}
		out.ModelStats = append(out.ModelStats, ms)
	}
	return out
}

// stats answers GET /v2/models[/{m}[/versions/{v}]]/stats.
func (h *httpHandler) stats(w http.ResponseWriter, name, version string) {
	resp, err := h.engine.ModelStatistics(name, version)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, statisticsJSON(resp))
}
