package triton

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/internal/testenv"
)

// hugeSize is the length of huge: 10 MB, as the hardening pass sent; 1 MB
// under the race detector, which spends seconds on each 10 MB value. Either
// is a thousand times the 1 KiB an error may quote.
var hugeSize = func() int {
	if testenv.Race {
		return 1 << 20
	}
	return 10 << 20
}()

// huge is a value of hugeSize bytes a user puts where a name goes.
var huge = strings.Repeat("A", hugeSize)

// TestUserValuesQuotedBounded: every error that quotes a value the user
// gave (a flag, a model's name, a file's content) quotes at most the start
// of it, with its length: one line under 1 KiB.
func TestUserValuesQuotedBounded(t *testing.T) {
	md, cfg := simpleModel()
	longModel, _ := simpleModel()
	longModel.Name = huge
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"--shape", func() error { _, err := ParseShapes([]string{huge + ":x"}); return err }},
		{"--shape dimension", func() error { _, err := ParseShapes([]string{"INPUT0:" + huge}); return err }},
		{"--shape input name", func() error {
			_, err := BuildRequests(md, cfg, InputOptions{Shapes: map[string][]int64{huge: {1}}})
			return err
		}},
		{"model name", func() error { _, err := BuildRequests(longModel, cfg, InputOptions{BatchSize: 9}); return err }},
		{"--request-parameter", func() error { _, _, err := ParseRequestParameter(huge); return err }},
		{"--request-parameter value", func() error { _, _, err := ParseRequestParameter("n:" + huge + ":int"); return err }},
		{"server URL", func() error { return CheckServerURL("http://h:1/"+huge, "") }},
		{"server URL scheme", func() error { return CheckServerURL(huge+"://h:1", "") }},
		{"port", func() error { return CheckServerURL("h:"+huge, "") }},
		{"protocol", func() error { return CheckServerURL("h:1", huge) }},
		{"endpoint", func() error { _, err := ParseEndpoint(huge); return err }},
		{"input data", func() error {
			path := filepath.Join(t.TempDir(), "data.json")
			if err := os.WriteFile(path, []byte(`{"data":[{"INPUT0":[1],"INPUT1":[1],"`+huge+`":[1]}]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := BuildRequests(md, cfg, InputOptions{Data: path})
			return err
		}},
		{"input data JSON", func() error {
			_, err := ParseInputData(strings.NewReader(`{"data":[{"IN":{"content":[1],"shape":[`+strings.Repeat("9", hugeSize)+`]}}]}`), "f.json")
			return err
		}},
	} {
		err := tc.err()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if msg := err.Error(); len(msg) > 1<<10 || strings.Contains(msg, "\n") || !strings.Contains(msg, "bytes in all)") {
			t.Errorf("%s: %d bytes %.200q; want one line under 1 KiB quoting the value cut, with its length", tc.name, len(msg), msg)
		}
	}
}
