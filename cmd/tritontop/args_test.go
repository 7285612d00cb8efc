package main

import (
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParseInterspersed(t *testing.T) {
	cases := []struct {
		args       []string
		positional []string
		speed      float64
		json       bool
	}{
		// Flags after the file: `tritontop replay sweep.jsonl --speed 4`.
		{[]string{"a.jsonl", "--speed", "4"}, []string{"a.jsonl"}, 4, false},
		{[]string{"--speed", "4", "a.jsonl"}, []string{"a.jsonl"}, 4, false},
		{[]string{"a.jsonl", "-json", "b.jsonl", "--speed=2"}, []string{"a.jsonl", "b.jsonl"}, 2, true},
		// After "--" everything is a file, even what looks like a flag.
		{[]string{"a.jsonl", "--", "--speed", "b"}, []string{"a.jsonl", "--speed", "b"}, 1, false},
		{nil, nil, 1, false},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		speed := fs.Float64("speed", 1, "")
		js := fs.Bool("json", false, "")
		got, err := parseInterspersed(fs, c.args)
		if err != nil || !slices.Equal(got, c.positional) || *speed != c.speed || *js != c.json {
			t.Errorf("%q: positional %q, speed %v, json %v, err %v; want %q, %v, %v", c.args, got, *speed, *js, err, c.positional, c.speed, c.json)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseInterspersed(fs, []string{"a.jsonl", "--nope"}); err == nil {
		t.Error("an unknown flag after the file was accepted")
	}
}
