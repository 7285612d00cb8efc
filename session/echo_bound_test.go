package session_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testenv"
)

// TestHugeValuesQuotedBounded: a 10 MB version or model name, from a
// --load-file or a flag, reaches the error of a refused run quoted
// bounded (textsafe.Quote: its first bytes and its length): the error is
// one short line, and it still names the model.
func TestHugeValuesQuotedBounded(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	// 10 MB, as the hardening pass sent; 1 MB under the race detector,
	// which takes half a minute over the 10 MB YAML files.
	size := 10 << 20
	if testenv.Race {
		size = 1 << 20
	}
	huge := strings.Repeat("9", size)
	hugeName := strings.Repeat("m", size)
	inAll := fmt.Sprintf("(%d bytes in all)", size)
	for _, tc := range []struct {
		name     string
		protocol string
		loadFile string
		model    string
		version  string
		want     []string
	}{
		{"version in --load-file, gRPC", "grpc", "models:\n  - model: simple\n    version: \"" + huge + "\"\n", "", "",
			[]string{`model "simple" has no ready version "9999`, inAll}},
		{"version in --load-file, HTTP", "http", "models:\n  - model: simple\n    version: \"" + huge + "\"\n", "", "",
			[]string{`model "simple" has no ready version "9999`, inAll}},
		{"-x, gRPC", "grpc", "", "simple", huge, []string{`model "simple" has no ready version "9999`, inAll}},
		{"-x, HTTP", "http", "", "simple", huge, []string{`model "simple" has no ready version "9999`, inAll}},
		{"model in --load-file", "grpc", "models:\n  - model: " + hugeName + "\n", "", "",
			[]string{`model "mmmm`, inAll}},
		{"-m", "http", "", hugeName, "", []string{`model "mmmm`, inAll}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := earlyConfig()
			// The server is up: a busy host may take longer than
			// earlyConfig's 100 ms, meant for an address nothing serves.
			c.ConnectTimeout = 10 * time.Second
			c.Protocol, c.Model, c.ModelVersion = tc.protocol, tc.model, tc.version
			c.URL = srv.GRPCAddr()
			if tc.protocol == "http" {
				c.URL = srv.HTTPAddr()
			}
			if tc.loadFile != "" {
				c.LoadFile = writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml", tc.loadFile)
			}
			err, _, stderr := runConfig(t, c)
			if err == nil {
				t.Fatal("the run was not refused")
			}
			msg := err.Error()
			if len(msg) > 600 || len(stderr) > 2000 || strings.Contains(msg, "\n") {
				t.Errorf("error of %d bytes (stderr %d), want one short line: %.400q", len(msg), len(stderr), msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %.400q lacks %q", msg, w)
				}
			}
		})
	}
}
