package textsafe

import (
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"resnet50", "resnet50"},
		{"", ""},
		{"naïve-模型", "naïve-模型"},
		{"\x1b]0;owned\x07", `\x1b]0;owned\x07`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"a\nb", `a\nb`},
		{"a\tb", `a\tb`},
		{"a\rb", `a\rb`},
		{"nul\x00", `nul\x00`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\x9b31m`},
		{"rtl\u202eevil", `rtl\u202eevil`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"lrm\u200e", `lrm\u200e`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"torn\xe6\x97", `torn\xe6\x97`},
		{"bell\a", `bell\x07`},
		{"backspace\b", `backspace\x08`},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if Clean(tc.in) != (tc.in == tc.want) {
			t.Errorf("Clean(%q) = %v", tc.in, Clean(tc.in))
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("x", 10<<20)
	got := Excerpt(long, 64)
	if len(got) > 100 || !strings.HasSuffix(got, "(10485760 bytes in all)") {
		t.Errorf("Excerpt of 10 MB = %q", got)
	}
	if got := Excerpt("短い", 4); got != "短… (6 bytes in all)" {
		t.Errorf("Excerpt cuts inside a rune: %q", got)
	}
	if got := Excerpt("ok\x1b", 10); got != `ok\x1b` {
		t.Errorf("Excerpt(short) = %q", got)
	}
}

func TestSanitize(t *testing.T) {
	type inner struct {
		Name   string
		hidden string
	}
	type outer struct {
		Model  string
		Ptr    *inner
		List   []string
		ByKey  map[string]inner
		Any    any
		Raw    []byte
		Nested [2]inner
	}
	v := outer{
		Model: "\x1b[2J", Ptr: &inner{Name: "a\nb", hidden: "\x1b"}, List: []string{"ok", "\x07"},
		ByKey: map[string]inner{"k\x1b": {Name: "\x00"}}, Any: "\x1b]0;t\x07", Raw: []byte("\x1b"),
		Nested: [2]inner{{Name: "\u202e"}},
	}
	Sanitize(&v)
	if v.Model != `\x1b[2J` || v.Ptr.Name != `a\nb` || v.List[1] != `\x07` || v.Any != `\x1b]0;t\x07` || v.Nested[0].Name != `\u202e` {
		t.Errorf("Sanitize left control characters: %+v", v)
	}
	if in, ok := v.ByKey[`k\x1b`]; !ok || in.Name != `\x00` {
		t.Errorf("map not sanitized: %q", v.ByKey)
	}
	if string(v.Raw) != "\x1b" || v.Ptr.hidden != "\x1b" {
		t.Error("Sanitize changed bytes or an unexported field")
	}
	Sanitize(nil)
	Sanitize(v) // not a pointer: nothing to set, no panic

	// A cycle ends at the walk's depth limit, the strings near its start
	// cleaned.
	type node struct {
		Name string
		Next *node
	}
	n := &node{Name: "\x1b"}
	n.Next = n
	Sanitize(n)
	if n.Name != `\x1b` {
		t.Errorf("a cyclic value's string not cleaned: %q", n.Name)
	}
}

func BenchmarkLineClean(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		_ = Line("resnet50 UNAVAILABLE: Exceeds maximum queue size")
	}
}

// TestQuoteAndBound: a user's value quoted in a message is at most
// MaxQuoted bytes of it, escaped, with its length when cut; short clean
// values are as they are (Bound) or as %q writes them (Quote).
func TestQuoteAndBound(t *testing.T) {
	tenMB := strings.Repeat("A", 10<<20)
	for _, tc := range []struct {
		name, in, quote, bound string
	}{
		{"short", "simple", `"simple"`, "simple"},
		{"empty", "", `""`, ""},
		{"quotes and backslashes", `a"b\c`, `"a\"b\\c"`, `a"b\c`},
		{"control characters", "a\x1b]0;t\a\n", `"a\x1b]0;t\a\n"`, `a\x1b]0;t\x07\n`},
		{"bidi override", "x\u202ey", `"x\u202ey"`, `x\u202ey`},
		{"not UTF-8", "a\xffb", `"a\xffb"`, `a\xffb`},
		{"10 MB", tenMB, `"` + tenMB[:MaxQuoted] + `…" (10485760 bytes in all)`, tenMB[:MaxQuoted] + "… (10485760 bytes in all)"},
		{"cut inside a rune", strings.Repeat("é", 40), `"` + strings.Repeat("é", 24) + `…" (80 bytes in all)`, strings.Repeat("é", 24) + "… (80 bytes in all)"},
		{"cut after a rune's first byte", "a" + strings.Repeat("é", 40), `"a` + strings.Repeat("é", 23) + `…" (81 bytes in all)`, "a" + strings.Repeat("é", 23) + "… (81 bytes in all)"},
		{"long and hostile", strings.Repeat("\x1b", 100), `"` + strings.Repeat(`\x1b`, MaxQuoted) + `…" (100 bytes in all)`, strings.Repeat(`\x1b`, MaxQuoted) + "… (100 bytes in all)"},
	} {
		if got := Quote(tc.in); got != tc.quote {
			t.Errorf("%s: Quote = %.120q; want %.120q", tc.name, got, tc.quote)
		}
		if got := Bound(tc.in); got != tc.bound {
			t.Errorf("%s: Bound = %.120q; want %.120q", tc.name, got, tc.bound)
		}
		if n := len(Quote(tc.in)); n > 4*MaxQuoted+40 {
			t.Errorf("%s: Quote is %d bytes", tc.name, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Bound("simple") }); n != 0 {
		t.Errorf("Bound of a short clean value allocates %v times", n)
	}
}
