package main

import "github.com/tritontop/tritontop/session"

// config is the run's settings the session reads itself, as a plain
// value; the rest of the flags build the session's parts (flagParts).
func (f *Config) config() session.Config {
	return session.Config{
		Record:        f.Record,
		Force:         f.Output.Force,
		Headless:      f.Headless,
		Tick:          f.Tick,
		Window:        f.Window,
		Duration:      f.Duration,
		Drain:         f.Drain,
		Timeout:       f.Timeout,
		SharedProcess: f.SharedProcess,
		URL:           f.URL,
		Protocol:      f.Protocol,
		Model:         f.Model,
		ModelVersion:  f.ModelVersion,
		Concurrency:   f.Concurrency,
		BatchSize:     f.BatchSize,
	}
}
