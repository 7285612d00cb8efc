package main

import "github.com/tritontop/tritontop/session"

// config is the run's settings the session reads itself, as a plain
// value; the rest of the flags build the session's parts (flagParts).
func (f *loadFlags) config() session.Config {
	return session.Config{
		Record:        f.record,
		Force:         f.out.force,
		Headless:      f.headless,
		Tick:          f.tick,
		Window:        f.window,
		Duration:      f.duration,
		Drain:         f.drain,
		Timeout:       f.timeout,
		SharedProcess: f.inProcessServer,
		URL:           f.url,
		Protocol:      f.protocol,
		Model:         f.model,
		ModelVersion:  f.modelVersion,
		Concurrency:   f.concurrency,
		BatchSize:     f.batch,
	}
}
