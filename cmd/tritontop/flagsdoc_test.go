package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var updateFlagsDoc = flag.Bool("update-flags-doc", false, "write docs/flags.md from the flag sets")

// flagsDocPath is docs/flags.md from this package's directory.
var flagsDocPath = filepath.Join("..", "..", "docs", "flags.md")

// docFlag is one flag as its flag set's PrintDefaults gives it.
type docFlag struct {
	name, value, usage string
}

// flagLine is a flag's first line in PrintDefaults: "  -name type".
var flagLine = regexp.MustCompile(`^  -(\S+)(?: (.+))?$`)

// helpOf runs tritontop with args (a subcommand's -h) and returns what it
// printed, on either stream, and the flags in it after the line after,
// when given.
func helpOf(t *testing.T, after string, args ...string) (text string, flags []docFlag) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != exitOK {
		t.Fatalf("tritontop %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	text = out.String() + errb.String()
	lines := strings.Split(text, "\n")
	if after != "" {
		i := slices.Index(lines, after)
		if i < 0 {
			t.Fatalf("tritontop %s: no line %q", strings.Join(args, " "), after)
		}
		lines = lines[i+1:]
	}
	for _, l := range lines {
		if m := flagLine.FindStringSubmatch(l); m != nil {
			flags = append(flags, docFlag{name: m[1], value: m[2]})
			continue
		}
		if u, ok := strings.CutPrefix(l, "    \t"); ok && len(flags) > 0 {
			f := &flags[len(flags)-1]
			f.usage = strings.TrimSpace(f.usage + " " + strings.TrimSpace(u))
		}
	}
	if len(flags) == 0 {
		t.Fatalf("tritontop %s: no flags in its help:\n%s", strings.Join(args, " "), text)
	}
	return text, flags
}

// usageLine is the first "Usage: ..." line of a help text, or "".
func usageLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if u, ok := strings.CutPrefix(l, "Usage: "); ok {
			return u
		}
	}
	return ""
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func writeFlagTable(b *strings.Builder, flags []docFlag) {
	b.WriteString("| Flag | Value | What it does |\n|---|---|---|\n")
	for _, f := range flags {
		dashes := "--"
		if len(f.name) == 1 {
			dashes = "-"
		}
		value := ""
		if f.value != "" {
			value = "`" + f.value + "`"
		}
		fmt.Fprintf(b, "| `%s%s` | %s | %s |\n", dashes, f.name, value, mdCell(f.usage))
	}
}

// flagsMarkdown is docs/flags.md: every subcommand's flags, from the flag
// sets as `-h` prints them.
func flagsMarkdown(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Flags\n\n")
	b.WriteString("Every flag of every subcommand, as `tritontop ... -h` prints it. This file is generated:\n" +
		"after a change of flags, `go generate ./cmd/tritontop` writes it again, and a test\n" +
		"(`TestFlagsDoc` in cmd/tritontop) fails while it is out of date. A flag of one letter takes\n" +
		"one dash (`-m`); the others take one or two (`--concurrency` or `-concurrency`). A flag with\n" +
		"no value is a switch (`--json`). What the flags do, with examples, is in the other guides:\n" +
		"[dashboard.md](dashboard.md), [headless.md](headless.md), [capacity-planning.md](capacity-planning.md).\n\n")

	_, load := helpOf(t, "Flags of a load run (tritontop, tritontop demo):", "-h")
	loadNames := map[string]bool{}
	for _, f := range load {
		loadNames[f.name] = true
	}
	b.WriteString("## tritontop (a load run)\n\n`tritontop -m MODEL [-u HOST:8001] [flags]`: drives load, live in the dashboard or headless.\n\n")
	writeFlagTable(&b, load)

	for _, sub := range []struct{ name, what string }{
		{"demo", "the simulator in-process and the dashboard on it"},
		{"plan", "capacity plan: one replica's capacity, the replicas a target rate needs, autoscaling"},
		{"tune", "the model configuration (instances, max batch size, dynamic batcher) that does best under an SLO, found live ([tune.md](tune.md))"},
		{"sim", "the Triton-compatible simulator"},
		{"replay", "a recorded run in the dashboard, or its CSV and summary"},
		{"report", "an HTML report of runs"},
		{"compare", "two runs side by side, level by level"},
		{"merge", "one run from the run files of --workers"},
	} {
		text, flags := helpOf(t, "", sub.name, "-h")
		fmt.Fprintf(&b, "\n## tritontop %s\n\n", sub.name)
		if u := usageLine(text); u != "" {
			fmt.Fprintf(&b, "`%s`: %s.\n\n", u, sub.what)
		} else {
			fmt.Fprintf(&b, "`tritontop %s [flags]`: %s.\n\n", sub.name, sub.what)
		}
		// A subcommand that takes a load run's flags lists only its own.
		var own []docFlag
		shared := 0
		names := map[string]bool{}
		for _, f := range flags {
			names[f.name] = true
			if loadNames[f.name] {
				shared++
			} else {
				own = append(own, f)
			}
		}
		if shared > len(load)/2 {
			var missing []string
			for _, f := range load {
				if !names[f.name] {
					missing = append(missing, "`"+f.name+"`")
				}
			}
			b.WriteString("Every flag of [a load run](#tritontop-a-load-run)")
			if len(missing) > 0 {
				fmt.Fprintf(&b, " but %s", strings.Join(missing, ", "))
			}
			if len(own) == 0 {
				b.WriteString(".\n")
				continue
			}
			b.WriteString(", and these:\n\n")
			flags = own
		}
		writeFlagTable(&b, flags)
	}
	return b.String()
}

// TestFlagsDoc: docs/flags.md is what the flag sets say today.
func TestFlagsDoc(t *testing.T) {
	want := flagsMarkdown(t)
	if *updateFlagsDoc {
		if err := os.WriteFile(flagsDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(flagsDocPath)
	if err != nil {
		t.Fatalf("%v: write it with: go generate ./cmd/tritontop", err)
	}
	if string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		line := func(ls []string) string {
			if i < len(ls) {
				return ls[i]
			}
			return "(end of file)"
		}
		t.Fatalf("docs/flags.md is out of date with the flags (first difference at line %d:\n  file:  %s\n  flags: %s)\n"+
			"write it again with: go generate ./cmd/tritontop", i+1, line(gl), line(wl))
	}
}
