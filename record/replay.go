package record

import (
	"context"
	"sync"
	"time"

	"github.com/tritontop/tritontop/stats"
)

// Replay plays recorded snapshots back in order, spaced as they were
// recorded and scaled by a speed factor, so that a TUI (or anything else
// that consumes live snapshots) can be fed from a run file. Pause, Resume,
// SetSpeed and Step may be called from any goroutine while Run plays; emit
// is only ever called from Run's goroutine.
type Replay struct {
	snaps []stats.Snapshot
	clock clock

	mu       sync.Mutex
	speed    float64
	paused   bool
	hold     bool
	cur      int           // index of the last emitted snapshot, -1 before the first
	progress time.Duration // recorded time already played toward the next snapshot
	pending  bool          // a Step wants snaps[cur] emitted
	gen      int           // bumped by every control call
	changed  time.Time     // clock time of the last control call
	wake     chan struct{}
}

// NewReplay returns a replay of snaps at the given speed: 1 plays in
// recorded time, 2 twice as fast, 0 (or less) as fast as emit takes them.
func NewReplay(snaps []stats.Snapshot, speed float64) *Replay {
	return &Replay{snaps: snaps, speed: speed, cur: -1, clock: realClock{}, wake: make(chan struct{}, 1)}
}

// HoldAtEnd makes Run wait at the last snapshot, for Step or cancellation,
// instead of returning; a viewer wants to step back through a finished
// replay.
func (r *Replay) HoldAtEnd(hold bool) {
	r.control(func() { r.hold = hold })
}

// Pause stops playback at the current snapshot.
func (r *Replay) Pause() { r.control(func() { r.paused = true }) }

// Resume continues playback after Pause or Step.
func (r *Replay) Resume() { r.control(func() { r.paused = false }) }

// Paused reports whether playback is paused.
func (r *Replay) Paused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paused
}

// SetSpeed changes the speed factor; the time already waited toward the
// next snapshot counts at the old speed.
func (r *Replay) SetSpeed(speed float64) { r.control(func() { r.speed = speed }) }

// Speed is the current speed factor.
func (r *Replay) Speed() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.speed
}

// Step pauses playback and moves n snapshots forward (n > 0) or back
// (n < 0), clamped to the recording, and has Run emit the snapshot there.
func (r *Replay) Step(n int) {
	r.control(func() {
		r.paused = true
		if len(r.snaps) == 0 {
			return
		}
		r.cur = min(max(r.cur+n, 0), len(r.snaps)-1)
		r.progress = 0
		r.pending = true
	})
}

// Position is the index of the last emitted snapshot (-1 before the first)
// and the number of snapshots.
func (r *Replay) Position() (index, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur, len(r.snaps)
}

func (r *Replay) control(f func()) {
	r.mu.Lock()
	f()
	r.gen++
	r.changed = r.clock.Now()
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run plays the snapshots into emit until the last one has been emitted
// (or, with HoldAtEnd, until ctx ends). It returns ctx's error when
// cancelled and nil at the end of the recording.
func (r *Replay) Run(ctx context.Context, emit func(stats.Snapshot)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.mu.Lock()
		if r.pending {
			r.pending = false
			s := r.snaps[r.cur]
			r.mu.Unlock()
			emit(s)
			continue
		}
		next := r.cur + 1
		atEnd := next >= len(r.snaps)
		if atEnd && !r.hold {
			r.mu.Unlock()
			return nil
		}
		if r.paused || atEnd {
			r.mu.Unlock()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-r.wake:
			}
			continue
		}
		var delay time.Duration
		gap := time.Duration(0)
		if r.cur >= 0 && r.speed > 0 {
			gap = recordedGap(r.snaps[r.cur], r.snaps[next]) - r.progress
			delay = time.Duration(float64(gap) / r.speed)
		}
		speed, gen := r.speed, r.gen
		r.mu.Unlock()

		if delay > 0 {
			start := r.clock.Now()
			timer := r.clock.After(delay)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-r.wake:
				// A control call: keep the recorded time played until it
				// came, and re-plan under the new state.
				r.mu.Lock()
				if r.gen != gen {
					r.keepPlayed(start, speed, gap)
				}
				r.mu.Unlock()
				continue
			case <-timer:
			}
			r.mu.Lock()
			if r.gen != gen {
				// A control call raced the timer: re-plan as above.
				r.keepPlayed(start, speed, gap)
				r.mu.Unlock()
				continue
			}
		} else {
			r.mu.Lock()
			if r.gen != gen {
				r.mu.Unlock()
				continue
			}
		}
		r.cur = next
		r.progress = 0
		s := r.snaps[next]
		r.mu.Unlock()
		emit(s)
	}
}

// keepPlayed adds to progress the recorded time played between start and
// the last control call, unless a Step has moved the position. r.mu is held.
func (r *Replay) keepPlayed(start time.Time, speed float64, gap time.Duration) {
	if r.pending {
		return
	}
	played := time.Duration(float64(r.changed.Sub(start)) * speed)
	r.progress += min(max(played, 0), gap)
}

// recordedGap is the recorded time between two snapshots: their run times,
// else their wall-clock times, else the later one's tick length.
func recordedGap(a, b stats.Snapshot) time.Duration {
	if d := b.Elapsed - a.Elapsed; d > 0 {
		return d
	}
	if d := b.Time.Sub(a.Time); d > 0 {
		return d
	}
	return max(b.Interval, 0)
}

// clock is the time source of a Replay, replaced in tests.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
