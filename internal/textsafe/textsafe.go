// Package textsafe makes strings that come from files and servers safe to
// print on a terminal or in Markdown: control characters (C0, DEL, C1),
// Unicode's bidirectional overrides and bytes that are not UTF-8 are shown
// escaped (\x1b, \u202e) instead of reaching the terminal, where an ESC
// could set the window title or clear the screen and a newline could forge
// a line of output. A run file, a server's error message and a model name
// all pass through here before tritontop prints them.
package textsafe

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// unsafeRune reports whether r must be shown escaped.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional marks and overrides
	}
	return false
}

// Clean reports whether s needs no escaping.
func Clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return cleanSlow(s[i:])
		}
	}
	return true
}

func cleanSlow(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n <= 1 || unsafeRune(r) {
			return false
		}
		s = s[n:]
	}
	return true
}

// Line returns s with every control character escaped, newlines and tabs
// included, so that it prints as one line. A clean s is returned as is,
// without allocating.
func Line(s string) string {
	if Clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[0]))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100 && unsafeRune(r):
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case unsafeRune(r):
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)))
			b.WriteString(h)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// Excerpt is Line(s) cut to at most max bytes of s, whole runes, with the
// length of what was left out said: for quoting a value that may be huge
// (a 10 MB line of a load file) in a one-line message.
func Excerpt(s string, max int) string {
	if len(s) <= max {
		return Line(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return Line(s[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes in all)"
}

// MaxQuoted is how many bytes of a user's value a message quotes at most.
const MaxQuoted = 48

// MaxErrorText is how many bytes of an error's text a message quotes when
// the error may quote a user's value (a JSON decoder's, with the number or
// string it choked on): Excerpt(err.Error(), MaxErrorText).
const MaxErrorText = 240

// Quote is how a message quotes a value it was given (a model name, a
// version, a header, a line of a file): in double quotes with Go's escapes
// (strconv.Quote: control characters, quotes, bidirectional overrides and
// bytes that are not UTF-8), cut after MaxQuoted bytes (whole runes) with
// an ellipsis and the value's length, so that a 10 MB value makes a line
// of 80 bytes: "AAAA…" (10485760 bytes in all). Use it for %q.
func Quote(s string) string {
	head, cut := quotedHead(s)
	q := strconv.Quote(head)
	if !cut {
		return q
	}
	return q[:len(q)-1] + "…\" (" + strconv.Itoa(len(s)) + " bytes in all)"
}

// Bound is Quote without the quotes and with Line's escapes, for a message
// that quotes the value itself (Triton's quote names in '…'): a short clean
// value comes back as it is, without allocating, so that such a message is
// Triton's own; a long one is cut as Quote cuts it.
func Bound(s string) string { return Excerpt(s, MaxQuoted) }

// quotedHead is s cut after MaxQuoted bytes, at a rune's start.
func quotedHead(s string) (string, bool) {
	if len(s) <= MaxQuoted {
		return s, false
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// Sanitize escapes, in place and with Line, every string reachable from v
// (a pointer): struct fields, slice and array elements, map keys and
// values, pointers. Byte slices are data (histograms, raw JSON), not text,
// and are left alone; unexported fields cannot be set and are skipped.
func Sanitize(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	sanitize(rv.Elem(), 0)
}

// maxDepth stops a walk through a cyclic or absurdly deep value.
const maxDepth = 32

func sanitize(v reflect.Value, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !Clean(s) && v.CanSet() {
			v.SetString(Line(s))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface {
				// An interface's value is not settable: copy, clean, store.
				if !v.CanSet() {
					return
				}
				c := reflect.New(e.Type()).Elem()
				c.Set(e)
				sanitize(c, depth+1)
				v.Set(c)
				return
			}
			sanitize(e, depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				sanitize(f, depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			sanitize(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			sanitize(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() || !v.CanSet() {
			return
		}
		kt, et := v.Type().Key(), v.Type().Elem()
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var changed []kv
		for iter.Next() {
			k := reflect.New(kt).Elem()
			k.Set(iter.Key())
			e := reflect.New(et).Elem()
			e.Set(iter.Value())
			sanitize(k, depth+1)
			sanitize(e, depth+1)
			changed = append(changed, kv{k, e})
		}
		m := reflect.MakeMapWithSize(v.Type(), len(changed))
		for _, c := range changed {
			m.SetMapIndex(c.k, c.v)
		}
		v.Set(m)
	}
}
