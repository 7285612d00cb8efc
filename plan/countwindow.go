package plan

import "github.com/tritontop/tritontop/stats"

// countWindowFull reports whether a count window (perf_analyzer's
// --measurement-mode count_windows) is full: its ticks hold at least count
// finished requests. As perf_analyzer, which looks at its count once a
// second until it is reached, a window has no length of its own, at least
// one tick and no limit: a level whose requests do not finish waits for
// them, and a run bounded in time needs --duration.
func countWindowFull(ticks []stats.Snapshot, count int) bool {
	var finished int64
	for _, t := range ticks {
		finished += t.Tick.Requests
	}
	return len(ticks) > 0 && finished >= int64(count)
}
