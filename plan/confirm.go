package plan

import (
	"fmt"

	"github.com/tritontop/tritontop/load"
)

// MaxStepDowns bounds how many times the confirmation of a capacity moves
// one grid level down after a repeat missed the SLO.
const MaxStepDowns = 3

// confirmation is where the capacity's repeats stand after the search: the
// level being confirmed, its measurements (indexes into done), and whether
// it is over.
type confirmation struct {
	level load.Target
	runs  []int // indexes in done of the level's measurements
	downs int   // grid levels stepped down after a miss
	// over: the level held Repeat times (held), or a miss left no level
	// to step down to.
	over, held bool
	// labels name each level after the search, for progress.
	labels map[int]string
}

// confirm walks the levels after the binary search. The search's answer is
// measured until it held Repeat times in a row; a miss moves the
// confirmation one level down the rate grid, measured afresh, at most
// MaxStepDowns times. ok is false while the search is still running or
// found no passing rate.
func (c *Capacity) confirm(done []Level) (confirmation, bool) {
	probes, rates := probed(done)
	g := c.grid(saturation(probes))
	k := searched(g, rates)
	if k == len(rates) {
		if _, more := g.Next(rates); more {
			return confirmation{}, false
		}
	}
	best := Best(rates[:k])
	if best < 0 {
		return confirmation{}, false
	}
	n := max(c.Repeat, 1)
	off := len(probes)
	cf := confirmation{level: rates[best].Target, runs: []int{off + best}, labels: map[int]string{}}
	idx := g.index(cf.level)
	for j := k; j < len(rates); j++ {
		cf.labels[off+j] = fmt.Sprintf("repeat %d of %d at %s", len(cf.runs)+1, n, cf.level)
		if cf.downs > 0 {
			cf.labels[off+j] += fmt.Sprintf(" (%d down)", cf.downs)
		}
		cf.runs = append(cf.runs, off+j)
		if rates[j].Pass {
			continue
		}
		if idx == 0 || cf.downs == MaxStepDowns {
			cf.over = true
			return cf, true
		}
		idx--
		cf.downs++
		cf.level, cf.runs = g.Levels[idx], nil
	}
	if len(cf.runs) >= n {
		cf.over, cf.held = true, true
	}
	return cf, true
}
