//go:build !(nvml && cgo && linux)

package stats

// localGPUSupport says whether this build reads local GPUs through NVML.
const localGPUSupport = false

// LocalGPUSampler reads the client host's own GPUs through NVML, so that a
// client sharing its host with GPU work shows that work. NVML is compiled in
// only when building with the nvml build tag and cgo on Linux
// (go build -tags nvml); this build has no NVML and reports no local GPUs.
type LocalGPUSampler struct{}

// NewLocalGPUSampler returns a sampler that reports no GPUs: this build has
// no NVML.
func NewLocalGPUSampler() *LocalGPUSampler { return &LocalGPUSampler{} }

// Sample reports no GPUs.
func (s *LocalGPUSampler) Sample() []GPU { return nil }

// Close does nothing.
func (s *LocalGPUSampler) Close() error { return nil }
