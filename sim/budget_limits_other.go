//go:build !linux

package sim

// processMemoryLimits reads no process limits outside Linux: the default
// budget follows the memory available.
func processMemoryLimits() []MemoryLimit { return nil }
