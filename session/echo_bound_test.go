package session_test

import (
	"strings"
	"testing"
)

// TestHugeValuesQuotedBounded: a 10 MB version or model name, from a
// --load-file or a flag, reaches the error of a refused run quoted
// bounded (textsafe.Quote: its first bytes and its length): the error is
// one short line, and it still names the model.
func TestHugeValuesQuotedBounded(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	dir := t.TempDir()
	huge := strings.Repeat("9", 10<<20)
	hugeName := strings.Repeat("m", 10<<20)
	for _, tc := range []struct {
		name     string
		protocol string
		loadFile string
		model    string
		version  string
		want     []string
	}{
		{"version in --load-file, gRPC", "grpc", "models:\n  - model: simple\n    version: \"" + huge + "\"\n", "", "",
			[]string{`model "simple" has no ready version "9999`, "(10485760 bytes in all)"}},
		{"version in --load-file, HTTP", "http", "models:\n  - model: simple\n    version: \"" + huge + "\"\n", "", "",
			[]string{`model "simple" has no ready version "9999`, "(10485760 bytes in all)"}},
		{"-x, gRPC", "grpc", "", "simple", huge, []string{`model "simple" has no ready version "9999`, "(10485760 bytes in all)"}},
		{"-x, HTTP", "http", "", "simple", huge, []string{`model "simple" has no ready version "9999`, "(10485760 bytes in all)"}},
		{"model in --load-file", "grpc", "models:\n  - model: " + hugeName + "\n", "", "",
			[]string{`model "mmmm`, "(10485760 bytes in all)"}},
		{"-m", "http", "", hugeName, "", []string{`model "mmmm`, "(10485760 bytes in all)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := earlyConfig()
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
