package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// The demo GPU's calibration is kept per host in the user's cache
// directory: a host does not change between two demos, while one
// calibration on a busy machine can differ from the next by a factor of
// two, and a demo (or a plan --demo) that sized its GPU anew every time
// would not repeat. --demo-gpu-rate auto calibrates again.
const demoCacheFile = "demo-gpu.json"

// demoCalibration is one host's calibration for one kind of request.
type demoCalibration struct {
	HostRate float64   `json:"host_rate"`
	When     time.Time `json:"when"`
}

// demoCacheKey names the requests a calibration measured: the model, the
// protocol, the batch size and the cores the process may use.
func demoCacheKey(f *Config) string {
	return fmt.Sprintf("%s/%s/b%d/%dcpu", f.Model, f.Protocol, f.BatchSize, runtime.NumCPU())
}

// demoCachePath is the cache file in dir (DemoConfig.CacheDir), or, with
// none, in tritontop's directory of the user's cache directory; "" when the
// user has no cache directory.
func demoCachePath(dir string) string {
	if dir != "" {
		return filepath.Join(dir, demoCacheFile)
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "tritontop", demoCacheFile)
}

// loadDemoCalibration returns the calibration for key cached in dir.
func loadDemoCalibration(dir, key string) (demoCalibration, bool) {
	path := demoCachePath(dir)
	if path == "" {
		return demoCalibration{}, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return demoCalibration{}, false
	}
	var all map[string]demoCalibration
	if json.Unmarshal(data, &all) != nil {
		return demoCalibration{}, false
	}
	c, ok := all[key]
	return c, ok && c.HostRate > 0
}

// saveDemoCalibration keeps c for key in dir; a cache that cannot be
// written only means the next demo calibrates again.
func saveDemoCalibration(dir, key string, c demoCalibration) {
	path := demoCachePath(dir)
	if path == "" {
		return
	}
	all := map[string]demoCalibration{}
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &all)
	}
	all[key] = c
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, data, 0o644) == nil {
		_ = os.Rename(tmp, path)
	}
}
