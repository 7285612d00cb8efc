package sim

import (
	"net/http"
)

// systemSharedMemory answers /v2/systemsharedmemory[/region/{r}]/{status,
// register,unregister} (the method checked), as Triton's HTTP frontend
// does.
func (h *httpHandler) systemSharedMemory(w http.ResponseWriter, r *http.Request, region, verb string) {
	var err error
	switch verb {
	case "status":
		var regions []SharedMemoryRegion
		if regions, err = h.engine.SystemSharedMemoryStatus(region); err == nil {
			writeJSON(w, http.StatusOK, shmStatusJSON(regions))
			return
		}
	case "register":
		err = h.registerShm(r, region)
	case "unregister":
		if err = h.engine.clientShm(); err == nil {
			err = h.engine.UnregisterSystemSharedMemory(region)
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeBody(w, http.StatusOK, "", nil)
}

// shmStatus is a region in HTTP's status answer.
type shmStatus struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Offset   uint64 `json:"offset"`
	ByteSize uint64 `json:"byte_size"`
}

func shmStatusJSON(regions []SharedMemoryRegion) []shmStatus {
	out := make([]shmStatus, 0, len(regions))
	for _, g := range regions {
		out = append(out, shmStatus{g.Name, g.Key, g.Offset, g.ByteSize})
	}
	return out
}

// registerShm reads a register request's body in Triton's order (the
// switch, the region's name, the body, "key", "offset", "byte_size") and
// registers the region.
func (h *httpHandler) registerShm(r *http.Request, region string) error {
	if err := h.engine.clientShm(); err != nil {
		return err
	}
	if region == "" {
		return invalidArg("'region name' is necessary to register system shared memory region")
	}
	hold := newBudgetHold(h.budget)
	defer hold.close()
	doc, _, err := h.readJSON(r, hold, true)
	if err != nil {
		return err
	}
	k, ok := doc.find("key")
	if !ok {
		return invalidArg("Shared memory register request has no 'key' field")
	}
	key, err := k.stringOr()
	if err != nil {
		return err
	}
	var offset, size uint64
	if v, ok := doc.find("offset"); ok {
		if offset, err = v.uintOr(); err != nil {
			return err
		}
	}
	v, ok := doc.find("byte_size")
	if !ok {
		return invalidArg("Shared memory register request has no 'byte_size' field")
	}
	if size, err = v.uintOr(); err != nil {
		return err
	}
	return h.engine.RegisterSystemSharedMemory(region, key, offset, size)
}
