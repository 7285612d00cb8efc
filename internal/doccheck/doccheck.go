// Package doccheck checks the project's Markdown: every relative link in
// README.md and docs/*.md names a file that exists and, after a #, a
// heading of that file by GitHub's anchor rules.
package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// linkRE matches an inline Markdown link or image, [text](target) or
// ![alt](target), with an optional "title" after the target.
var linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// Link is one relative link found in a Markdown file.
type Link struct {
	File   string // the Markdown file, as given to Links
	Line   int    // 1-based
	Target string // as written
}

// Links returns the relative links of a Markdown document: those outside
// fenced code blocks and inline code, and not to a URL with a scheme
// (http:, mailto:, ...).
func Links(file, text string) []Link {
	var out []Link
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
				continue
			case strings.HasPrefix(trimmed, fence) && strings.TrimLeft(trimmed, fence[:1]) == "":
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatchIndex(stripInlineCode(line), -1) {
			target := line[m[2]:m[3]]
			if hasScheme(target) {
				continue
			}
			out = append(out, Link{File: file, Line: i + 1, Target: target})
		}
	}
	return out
}

// fenceOf returns the fence a line opens or closes (``` or ~~~, three or
// more), or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(line, strings.Repeat(c, 3)) {
			n := len(line) - len(strings.TrimLeft(line, c))
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// stripInlineCode blanks the text between backticks, keeping the length
// so that offsets still index the original line.
func stripInlineCode(line string) string {
	b := []byte(line)
	in := false
	for i, c := range b {
		switch {
		case c == '`':
			in = !in
		case in:
			b[i] = ' '
		}
	}
	return string(b)
}

func hasScheme(target string) bool {
	i := strings.IndexByte(target, ':')
	if i <= 0 {
		return false
	}
	for _, c := range target[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// headingRE matches an ATX heading.
var headingRE = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)

// mdLinkText reduces [text](url) to text for a heading's anchor.
var mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// Anchors returns the anchors GitHub gives the headings of a Markdown
// document: the heading's text lower-cased, everything but letters,
// digits, spaces, hyphens and underscores dropped, spaces made hyphens,
// and -1, -2, ... appended to repeats.
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if f := fenceOf(trimmed); f != "" {
			if fence == "" {
				fence = f
			} else if strings.HasPrefix(trimmed, fence) && strings.TrimLeft(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[1])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Slug is GitHub's anchor for a heading's text.
func Slug(heading string) string {
	heading = mdLinkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Check returns one line for each relative link of the Markdown files
// (paths relative to root) that does not resolve: a file or directory
// that does not exist, or an anchor that names no heading of its file.
func Check(root string, files []string) ([]string, error) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := Anchors(string(b))
		anchors[path] = a
		return a, nil
	}
	var problems []string
	for _, f := range files {
		src := filepath.Join(root, f)
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		for _, l := range Links(f, string(b)) {
			path, frag, _ := strings.Cut(l.Target, "#")
			dest := src
			if path != "" {
				dest = filepath.Join(filepath.Dir(src), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file", l.File, l.Line, l.Target))
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(strings.ToLower(dest), ".md") {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", dest, err)
			}
			if !a[strings.ToLower(frag)] {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: no heading with that anchor", l.File, l.Line, l.Target))
			}
		}
	}
	return problems, nil
}
