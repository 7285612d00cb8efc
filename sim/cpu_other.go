//go:build !unix

package sim

// processCPUSeconds is not measured on this platform; nv_cpu_utilization
// then reads 0.
func processCPUSeconds() (float64, bool) { return 0, false }
