package main

import (
	"flag"
	"io"

	"github.com/tritontop/tritontop/session"
)

// runDemo is `tritontop demo`: the simulator in-process with its demo
// models, and the dashboard driving load against it. Every load flag of a
// normal run works; -m and -u default to the simulator's resnet50.
func runDemo(args []string, stdout, stderr io.Writer) int {
	var demo session.DemoConfig
	c, err := parseLoadFlags("tritontop demo", args, stderr, func(fs *flag.FlagSet, _ *session.Config) { registerDemoFlags(fs, &demo) })
	if err != nil {
		return flagExit("tritontop demo", err, stderr)
	}
	c.Demo, c.Args = &demo, append([]string{"demo"}, args...)
	return runConfig(c, stdout, stderr)
}
