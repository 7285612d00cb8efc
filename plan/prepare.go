package plan

import (
	"time"

	"github.com/tritontop/tritontop/load"
)

// Preparer changes the server between the levels of a stepped run that
// need it: tritontop tune loads each level's model configuration. The
// stepper asks it before every level after the first; a level it prepares
// starts from a stopped load: the level before is paused and its requests
// in flight finish (as between open-loop levels), Prepare runs, and the
// level starts at the tick boundary after Prepare is done, its first tick
// warm-up.
type Preparer interface {
	// Needs reports whether the server must change before the level at t
	// starts (the level the search's Next returned last).
	Needs(t load.Target) bool
	// Prepare changes it, with no load applied and nothing in flight. It
	// must return at once (it runs on the collector's goroutine) and call
	// done once, from any goroutine, when the change is made: with nil,
	// or with why the level cannot be measured; the stepper then asks the
	// search for another level in its place (the Preparer tells the
	// search itself which level failed).
	Prepare(t load.Target, done func(error))
}

// needsPrepare reports whether the level at t needs Options.Prepare.
func (s *Stepper) needsPrepare(t load.Target) bool {
	return s.o.Prepare != nil && s.o.Prepare.Needs(t)
}

// prepare runs Options.Prepare for the settled level st; the level starts
// (or is replaced) at the boundary after it is done.
func (s *Stepper) prepare(st *settling) {
	s.preparing = true
	s.publish(time.Time{})
	s.o.Prepare.Prepare(st.target, func(err error) {
		s.bound.AtNextTick(func() { s.prepared(st, err) })
	})
}

// prepared starts the prepared level st at this boundary, or, when it
// could not be prepared, asks the search for another level in its place.
// It runs at a tick boundary, on the collector's goroutine.
func (s *Stepper) prepared(st *settling, err error) {
	s.preparing = false
	if err == nil {
		s.startSettled(st)
		s.drv.SetStep(st.index, st.target)
		s.drv.Resume()
		s.publish(time.Time{})
		return
	}
	next, ok := s.o.Search.Next(s.levels)
	if !ok {
		s.done = true
		if s.o.OnDone != nil {
			s.o.OnDone(s.Result())
		}
		s.publish(time.Time{})
		s.drv.Stop(s.o.Drain)
		return
	}
	st = &settling{index: st.index, target: next}
	if s.needsPrepare(next) {
		s.prepare(st)
		return
	}
	s.prepared(st, nil)
}
