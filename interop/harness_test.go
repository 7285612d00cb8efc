package interop_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/interop"
)

// TestServerStartUp starts a server with the whole model repository and
// logs how long it took to be ready; its endpoints answer on the ports the
// harness gave it.
func TestServerStartUp(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	srv := interop.Start(t, interop.Options{})
	t.Logf("ready in %v (start to first 200 of v2/health/ready)", srv.StartUp.Round(time.Millisecond))
	if code, _ := get(t, "http://"+srv.HTTP+"/v2/health/live"); code != http.StatusOK {
		t.Errorf("v2/health/live: HTTP %d", code)
	}
	if _, body := get(t, srv.MetricsURL()); !strings.Contains(body, `nv_inference_count{model="identity_int32",version="1"} 0`) {
		t.Errorf("metrics lack identity_int32's inference count:\n%s", body)
	}
	st := srv.Statistics(t, "identity_int32")
	if st.Name != "identity_int32" || st.Version != "1" || st.Inference.Success.Count != 0 {
		t.Errorf("statistics of a fresh server: %+v", st)
	}
	t.Logf("wall time %v", time.Since(begin).Round(time.Millisecond))
}

// TestServerEditedRepository starts a server in explicit model control
// with a repository the test changed: a config edited and a model added,
// both served as written.
func TestServerEditedRepository(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	srv := interop.Start(t, interop.Options{
		Models:   []string{"identity_int32"},
		Explicit: true,
		Edit: func(t testing.TB, repo string) {
			interop.WriteConfig(t, repo, "identity_int32", `name: "identity_int32"
backend: "identity"
max_batch_size: 16
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
`)
			interop.WriteConfig(t, repo, "identity_fp32_4", `name: "identity_fp32_4"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
`)
		},
	})
	t.Logf("ready in %v", srv.StartUp.Round(time.Millisecond))
	for model, want := range map[string]int{"identity_int32": 16, "identity_fp32_4": 4} {
		code, body := get(t, "http://"+srv.HTTP+"/v2/models/"+model+"/config")
		var cfg struct {
			MaxBatchSize int `json:"max_batch_size"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &cfg) != nil || cfg.MaxBatchSize != want {
			t.Errorf("config of %s: HTTP %d, max_batch_size %d, want %d: %s", model, code, cfg.MaxBatchSize, want, body)
		}
	}
	// Explicit control: the repository API loads and unloads.
	resp, err := http.Post("http://"+srv.HTTP+"/v2/repository/models/identity_fp32_4/unload", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("unload in explicit mode: HTTP %d", resp.StatusCode)
	}
	if code, _ := get(t, "http://"+srv.HTTP+"/v2/models/identity_fp32_4/ready"); code == http.StatusOK {
		t.Error("identity_fp32_4 is still ready after its unload")
	}
	t.Logf("wall time %v", time.Since(begin).Round(time.Millisecond))
}

// get fetches url and returns its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
