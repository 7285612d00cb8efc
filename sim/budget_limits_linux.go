package sim

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// processMemoryLimits reads the cgroup memory limit and what RLIMIT_AS and
// RLIMIT_DATA leave the process.
func processMemoryLimits() []MemoryLimit {
	var out []MemoryLimit
	if n, ok := cgroupMemoryLimit(); ok {
		out = append(out, MemoryLimit{Bytes: n, What: "the cgroup memory limit"})
	}
	status := procStatus()
	for _, r := range []struct {
		res   int
		field string
		what  string
	}{
		{syscall.RLIMIT_AS, "VmSize", "the address space RLIMIT_AS leaves"},
		{syscall.RLIMIT_DATA, "VmData", "the data segment RLIMIT_DATA leaves"},
	} {
		var rl syscall.Rlimit
		if syscall.Getrlimit(r.res, &rl) != nil || rl.Cur >= math.MaxInt64 {
			continue
		}
		left := int64(rl.Cur) - status[r.field]
		out = append(out, MemoryLimit{Bytes: max(left, 0), What: r.what})
	}
	return out
}

// procStatus reads the byte sizes of /proc/self/status ("VmSize: 1234 kB").
func procStatus() map[string]int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), ":")
		f := strings.Fields(v)
		if !ok || len(f) != 2 || f[1] != "kB" {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			out[name] = n << 10
		}
	}
	return out
}

// noCgroupLimit: a cgroup limit at or over this is "max" (cgroup v1 writes
// the largest page-aligned int64).
const noCgroupLimit = 1 << 62

// cgroupMemoryLimit is the smallest memory limit of the process's cgroup
// and its ancestors (cgroup v2's memory.max), or its cgroup v1
// memory.limit_in_bytes.
func cgroupMemoryLimit() (int64, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	least, found := int64(math.MaxInt64), false
	take := func(file string) {
		v, err := os.ReadFile(file)
		if err != nil {
			return
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err == nil && n < noCgroupLimit && n < least {
			least, found = n, true
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			// cgroup v2: the limit of every ancestor applies.
			for dir := filepath.Clean("/" + parts[2]); ; dir = filepath.Dir(dir) {
				take(filepath.Join("/sys/fs/cgroup", dir, "memory.max"))
				if dir == "/" {
					break
				}
			}
		case strings.Contains(","+parts[1]+",", ",memory,"):
			take(filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
			// Inside a container the cgroup is mounted as the root.
			take("/sys/fs/cgroup/memory/memory.limit_in_bytes")
		}
	}
	return least, found
}
