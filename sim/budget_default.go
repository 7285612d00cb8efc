package sim

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/mem"
)

// MemoryLimit is one limit on the memory this process may use, and what
// sets it.
type MemoryLimit struct {
	Bytes int64
	What  string
}

// MemoryLimits are the limits on the memory this process may use that it
// can see: its cgroup's memory limit, the address space and data segment
// its rlimits leave it (RLIMIT_AS and RLIMIT_DATA, less what it already
// maps), and the memory available on the host. Limits that are not set are
// left out.
func MemoryLimits() []MemoryLimit {
	limits := processMemoryLimits()
	if vm, err := mem.VirtualMemory(); err == nil && vm.Available > 0 {
		limits = append(limits, MemoryLimit{Bytes: int64(min(vm.Available, math.MaxInt64)), What: "the memory available"})
	}
	return limits
}

// fallbackMemoryLimit stands in when no limit can be read.
const fallbackMemoryLimit = 4 << 30

// MemoryBudgetDefaultRule says how DefaultMemoryBudget is derived.
const MemoryBudgetDefaultRule = "half of the smallest memory limit this process sees (its cgroup's limit, what RLIMIT_AS and RLIMIT_DATA leave it, the memory available) once 256 MiB is set aside"

// DefaultMemoryBudget is the memory budget when none is given: half of
// what the smallest limit in MemoryLimits leaves after
// MemoryBudgetOverhead, and at least MinMemoryBudget. Half, because the
// collector takes garbage back only when it runs: with Go's soft memory
// limit at the budget plus the overhead (Config.SetGoMemoryLimit) the heap
// stays near it, and the other half is headroom for what the count leaves
// out (stacks, fragmentation, the runtime's own). The description says
// where the number comes from.
func DefaultMemoryBudget() (bytes int64, description string) {
	return defaultMemoryBudget(MemoryLimits())
}

func defaultMemoryBudget(limits []MemoryLimit) (int64, string) {
	least := MemoryLimit{Bytes: fallbackMemoryLimit, What: "an assumed 4 GiB (no limit could be read)"}
	for i, l := range limits {
		if i == 0 || l.Bytes < least.Bytes {
			least = l
		}
	}
	b := max((least.Bytes-MemoryBudgetOverhead)/2, MinMemoryBudget)
	return b, fmt.Sprintf("half of %s (%s) once %s is set aside", least.What, FormatBytes(least.Bytes), FormatBytes(MemoryBudgetOverhead))
}

// FormatBytes writes n in the largest binary unit that keeps one decimal.
func FormatBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, u := float64(n)/1024, 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[u:u+1] + "iB"
}

// ParseBytes reads a byte count: digits, optionally followed by KiB, MiB,
// GiB or TiB (or K, M, G, T, binary too).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for i, u := range []string{"K", "M", "G", "T"} {
		for _, suffix := range []string{u + "iB", u} {
			if rest, ok := strings.CutSuffix(t, suffix); ok {
				t, mult = strings.TrimSpace(rest), int64(1)<<(10*(i+1))
				break
			}
		}
		if mult > 1 {
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("not a byte count: give bytes, or a whole number with KiB, MiB, GiB or TiB")
	}
	if n > math.MaxInt64/mult {
		return 0, errors.New("too large")
	}
	return n * mult, nil
}

// CheckMemoryBudget says what is wrong with a memory budget of n bytes
// (0 is the default), or nil.
func CheckMemoryBudget(n int64) error {
	switch {
	case n < 0:
		return fmt.Errorf("%d bytes is negative; give 0 for the default, or at least %d bytes (1 MiB)", n, MinMemoryBudget)
	case n != 0 && n < MinMemoryBudget:
		return fmt.Errorf("%d bytes is below the least memory budget, %d bytes (1 MiB); give 0 for the default", n, MinMemoryBudget)
	}
	return nil
}

// MemoryBudgetFlag is the memory budget's command-line value: one budget
// that --memory-budget sets, and its old names too (--grpc-budget,
// --http-max-buffered-bytes, from when the simulator had one budget per
// protocol), so that command lines written for them keep working. It takes
// bytes, or a whole number with KiB, MiB, GiB or TiB; 0 is the default.
type MemoryBudgetFlag struct {
	Bytes int64
	from  string // the flag that set it
	err   error  // two of its names given different values
}

// Name is the flag.Value that sets the budget under the flag name.
func (f *MemoryBudgetFlag) Name(name string) flag.Value { return &budgetFlagName{f: f, name: name} }

type budgetFlagName struct {
	f    *MemoryBudgetFlag
	name string
}

func (v *budgetFlagName) String() string {
	if v.f == nil {
		return "0"
	}
	return strconv.FormatInt(v.f.Bytes, 10)
}

func (v *budgetFlagName) Set(s string) error {
	n, err := ParseBytes(s)
	if err != nil {
		return err
	}
	if f := v.f; f.from != "" && f.from != v.name && n != f.Bytes && f.err == nil {
		f.err = fmt.Errorf("--%s %d and --%s %d both set the memory budget (the old names --grpc-budget and --http-max-buffered-bytes set --memory-budget): give one", f.from, f.Bytes, v.name, n)
	}
	v.f.Bytes, v.f.from = n, v.name
	return nil
}

// Check says what is wrong with the value given, naming its flag, or nil.
func (f *MemoryBudgetFlag) Check() error {
	if f.err != nil {
		return f.err
	}
	if err := CheckMemoryBudget(f.Bytes); err != nil {
		return fmt.Errorf("--%s %d: %w", f.from, f.Bytes, err)
	}
	return nil
}
