package sim

import (
	"encoding/json"
	"net/http"

	"github.com/tritontop/tritontop/triton/kserve"
)

// systemSharedMemory answers /v2/systemsharedmemory[/region/{r}]/{status,
// register,unregister}, as Triton's HTTP frontend does.
func (h *httpHandler) systemSharedMemory(w http.ResponseWriter, r *http.Request, region, verb string) {
	switch verb {
	case "status":
		if !methodIs(w, r, http.MethodGet) {
			return
		}
		regions, err := h.engine.SystemSharedMemoryStatus(region)
		if err != nil {
			writeError(w, err)
			return
		}
		type status struct {
			Name     string `json:"name"`
			Key      string `json:"key"`
			Offset   uint64 `json:"offset"`
			ByteSize uint64 `json:"byte_size"`
		}
		out := make([]status, 0, len(regions))
		for _, g := range regions {
			out = append(out, status{g.Name, g.Key, g.Offset, g.ByteSize})
		}
		b, _ := json.Marshal(out)
		writeBody(w, http.StatusOK, "application/json", b)
	case "register":
		if !methodIs(w, r, http.MethodPost) {
			return
		}
		var body struct {
			Key      string `json:"key"`
			Offset   uint64 `json:"offset"`
			ByteSize uint64 `json:"byte_size"`
		}
		if err := h.readOptionalJSON(r, &body); err != nil {
			writeError(w, err)
			return
		}
		if err := h.engine.RegisterSystemSharedMemory(region, body.Key, body.Offset, body.ByteSize); err != nil {
			writeError(w, err)
			return
		}
		writeBody(w, http.StatusOK, "", nil)
	case "unregister":
		if !methodIs(w, r, http.MethodPost) {
			return
		}
		if err := h.engine.UnregisterSystemSharedMemory(region); err != nil {
			writeError(w, err)
			return
		}
		writeBody(w, http.StatusOK, "", nil)
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// checkShmInput checks an HTTP input in shared memory as Triton's HTTP
// frontend does: it carries no data of its own and its parameters are of
// the right types (the engine reads the region).
func checkShmInput(t *kserve.RequestInput) error {
	_, bin := t.Parameters["binary_data_size"]
	if len(t.Data) > 0 || bin {
		msg := "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But set"
		if len(t.Data) > 0 {
			msg += " 'data'"
		}
		if bin {
			msg += " 'binary_data_size'"
		}
		return invalidArg("%s 'shared_memory_region'", msg)
	}
	if _, ok := t.Parameters[shmRegionParam].(string); !ok {
		return invalidArg("Unable to parse 'shared_memory_region'")
	}
	for _, k := range []string{shmOffsetParam, shmByteSizeParam} {
		if v, ok := t.Parameters[k]; ok {
			if n, isNum := v.(json.Number); !isNum || !isUint(n) {
				return invalidArg("Unable to parse '%s'", k)
			}
		}
	}
	return nil
}

// isUint reports whether n is a non-negative integer.
func isUint(n json.Number) bool {
	v, err := n.Int64()
	return err == nil && v >= 0
}

// checkShmOutput refuses what Triton's HTTP frontend refuses of an output
// in shared memory (ValidateOutputParameter): classification, or binary
// data, along with it.
func checkShmOutput(params map[string]any) error {
	if _, ok := params[shmRegionParam]; !ok {
		return nil
	}
	if _, ok := params["classification"]; ok {
		return invalidArg("Output can't set both 'shared_memory_region' and 'classification'")
	}
	if b, ok := params["binary_data"].(bool); ok && b {
		return invalidArg("Output can't set both 'shared_memory_region' and 'binary_data'")
	}
	return nil
}
