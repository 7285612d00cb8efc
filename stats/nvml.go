//go:build nvml && cgo && linux

package stats

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// localGPUSupport says whether this build reads local GPUs through NVML.
const localGPUSupport = true

// LocalGPUSampler reads the client host's own GPUs through NVML, so that a
// client sharing its host with GPU work shows that work. NVML is compiled in
// only when building with the nvml build tag and cgo on Linux
// (go build -tags nvml); other builds report no local GPUs. NVML is loaded
// at run time (libnvidia-ml.so.1, installed with the NVIDIA driver), so the
// same binary runs on hosts without the driver and reports no local GPUs
// there, which is a normal state and not an error. A LocalGPUSampler is
// used by one goroutine at a time.
type LocalGPUSampler struct {
	lib     nvml.Interface // nil when NVML could not be initialized
	devices []localDevice
}

// localDevice is one GPU's handle and its fixed identity, read once.
type localDevice struct {
	handle     nvml.Device
	uuid, name string
}

// NewLocalGPUSampler initializes NVML once and finds the host's GPUs. A
// host without the NVIDIA driver, or whose driver does not answer, has no
// local GPUs.
func NewLocalGPUSampler() *LocalGPUSampler {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return &LocalGPUSampler{}
	}
	s := &LocalGPUSampler{lib: lib}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return s
	}
	for i := range n {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		// The UUID is what names a GPU in snapshots and run files; a device
		// without one cannot be told apart from the next.
		uuid, ret := d.GetUUID()
		if ret != nvml.SUCCESS {
			continue
		}
		name, _ := d.GetName()
		s.devices = append(s.devices, localDevice{handle: d, uuid: uuid, name: name})
	}
	return s
}

// Sample reads each GPU's utilization, memory and power now. A gauge the
// device does not support stays unreported (its Has* flag false); a device
// that reports none is left out.
func (s *LocalGPUSampler) Sample() []GPU {
	if len(s.devices) == 0 {
		return nil
	}
	out := make([]GPU, 0, len(s.devices))
	for _, d := range s.devices {
		g := GPU{UUID: d.uuid, Name: d.name}
		if u, ret := d.handle.GetUtilizationRates(); ret == nvml.SUCCESS {
			g.Utilization, g.HasUtilization = float64(u.Gpu)/100, true
		}
		if m, ret := d.handle.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemoryUsed, g.MemoryTotal, g.HasMemory = float64(m.Used), float64(m.Total), true
		}
		// NVML reports power in milliwatts.
		if mw, ret := d.handle.GetPowerUsage(); ret == nvml.SUCCESS {
			g.PowerW, g.HasPower = float64(mw)/1000, true
			if lim, ret := d.handle.GetPowerManagementLimit(); ret == nvml.SUCCESS {
				g.PowerLimitW = float64(lim) / 1000
			}
		}
		if g.HasUtilization || g.HasMemory || g.HasPower {
			out = append(out, g)
		}
	}
	return out
}

// Close releases NVML. Sample reports no GPUs afterwards; a second Close
// does nothing.
func (s *LocalGPUSampler) Close() error {
	lib := s.lib
	s.lib, s.devices = nil, nil
	if lib == nil {
		return nil
	}
	if ret := lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("local GPUs: NVML shutdown: %w", ret)
	}
	return nil
}
