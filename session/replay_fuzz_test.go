package session_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/tritontop/tritontop/session"
)

// hostileNames are strings a run file may hold where a model name or an
// error message goes: escape sequences that set the terminal's title or
// clear its screen, a forged line, NUL, DEL, C1 and a bidirectional
// override.
var hostileNames = []string{
	`\u001b]0;owned\u0007`, `\u001b[2J\u001b[H`, `a\nfake: line`, `nul\u0000`, `del\u007f`, `c1\u009b31m`, `rtl\u202eevil`, `\r\u001b[1A`,
}

// FuzzReplayTerminalOutput reads arbitrary bytes as a run file with replay,
// as its summary (no terminal), as Markdown and as JSON: whatever the file
// holds, what replay writes to the terminal (stdout and stderr, and its
// error, which the command line prints) has no control characters but
// newlines and tabs, and is valid UTF-8.
func FuzzReplayTerminalOutput(f *testing.F) {
	v1, err := os.ReadFile("../record/testdata/v1.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v1, uint8(0))
	for i, name := range hostileNames {
		f.Add(bytes.ReplaceAll(v1, []byte(`"resnet50"`), []byte(`"`+name+`"`)), uint8(i))
		f.Add(bytes.Replace(v1, []byte(`"2.73.0"`), []byte(`"`+name+`"`), 1), uint8(i+1))
		f.Add(bytes.Replace(v1, []byte(`"triton"`), []byte(`"`+name+`"`), 1), uint8(i+2))
	}
	f.Add([]byte("\x1b]0;owned\x07\n"), uint8(0))
	f.Add([]byte(`{"type":"header","schema":1,"model":{"name":"\u001b[2J"}}`+"\n"), uint8(1))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, form uint8) {
		path := filepath.Join(dir, "fuzz.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c := []session.ReplayConfig{{File: path, Speed: 1}, {File: path, Speed: 1, Markdown: true}, {File: path, Speed: 1, JSON: true}}[int(form)%3]
		var stdout, stderr bytes.Buffer
		if err := session.Replay(context.Background(), c, &stdout, &stderr); err != nil {
			stderr.WriteString("tritontop: " + err.Error() + "\n")
		}
		args := c
		for _, out := range []struct {
			name string
			b    []byte
		}{{"stdout", stdout.Bytes()}, {"stderr", stderr.Bytes()}} {
			if !utf8.Valid(out.b) {
				t.Fatalf("replay %v: %s is not valid UTF-8: %q", args, out.name, out.b)
			}
			for _, r := range string(out.b) {
				if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
					t.Fatalf("replay %v: %s holds %U: %q", args, out.name, r, out.b)
				}
			}
		}
	})
}
