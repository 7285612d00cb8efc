//go:build linux

package stats

import "golang.org/x/sys/unix"

// allowedCPUs are the CPUs this process may run on (taskset, a cgroup's
// cpuset), ascending; nil when they cannot be read.
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for i := range len(set) * 64 {
		if set.IsSet(i) {
			out = append(out, i)
		}
	}
	return out
}
