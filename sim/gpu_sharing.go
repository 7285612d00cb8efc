package sim

import "time"

// DefaultGPUOverlap is the overlap of a GPU whose GPUSpec sets none: two
// executions at once each take 1.8 times as long as alone, so that together
// they get through 11% more work than one does, the modest gain a second
// instance brings on a GPU the first already keeps busy.
const DefaultGPUOverlap = 0.2

// A GPU shares its compute among the executions running on it at once,
// whatever model or instance they belong to, by processor sharing: with n
// running, each progresses at 1/slowdown(n) of its solo speed. Processor
// sharing is round-robin time slicing with the quantum taken to zero. A
// real quantum would need a timer firing every quantum per busy GPU, cost
// CPU in proportion to simulated time, and make durations depend on where
// the slices fall; processor sharing only does work when an execution
// starts or ends, and given the start times an execution's end is exact, so
// tests can work durations out by hand. Progress is kept as "work": the
// solo nanoseconds each running execution has received since the GPU was
// last idle (all running executions receive the same). An execution of solo
// time d that starts at work w ends when work reaches w + d.

// slowdown is how many times longer than alone an execution runs while n
// executions share the GPU: 1 + (n−1)·(1−overlap). Overlap 0 is pure time
// slicing (n at once each take n times as long: no gain in throughput);
// overlap 1 lets executions run side by side as if alone.
func (g *gpu) slowdown(n int) float64 {
	if n <= 1 {
		return 1
	}
	return 1 + float64(n-1)*(1-g.overlap)
}

// advance brings work up to t (engine clock); the caller holds mu. Callers
// read the clock before taking the lock, so t may lag workAt a little: time
// never runs backwards here.
func (g *gpu) advance(t int64) {
	if t <= g.workAt {
		return
	}
	if g.active > 0 {
		g.work += float64(t-g.workAt) / g.slowdown(g.active)
	}
	g.workAt = t
}

// begin starts instance in's execution of solo compute time d at t. The
// instance's wake channel receives when another execution ends, as this
// one then speeds up. It returns the work at which the execution is done
// and how long it takes if nothing else starts or ends meanwhile: d itself
// when it runs alone.
func (g *gpu) begin(t int64, d time.Duration, in *instance) (done float64, left time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active == 0 {
		g.busySince = t
		g.work, g.workAt = 0, t
	} else {
		g.advance(t)
	}
	g.active++
	in.shared = g.active > 1
	for _, other := range g.running {
		other.shared = true
	}
	g.running = append(g.running, in)
	return g.work + float64(d), time.Duration(float64(d) * g.slowdown(g.active))
}

// left is how much longer, from t, an execution that is done at work done
// runs if nothing starts or ends meanwhile; 0 when it is done.
func (g *gpu) left(t int64, done float64) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.advance(t)
	if g.work >= done {
		return 0
	}
	return time.Duration((done - g.work) * g.slowdown(g.active))
}

// end ends instance in's execution at t, wakes the others, which now run
// faster, and reports whether another execution ran on the GPU at any time
// during this one.
func (g *gpu) end(t int64, in *instance) (shared bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.advance(t)
	g.active--
	for i, other := range g.running {
		if other == in {
			last := len(g.running) - 1
			g.running[i] = g.running[last]
			g.running[last] = nil
			g.running = g.running[:last]
			break
		}
	}
	if g.active == 0 && t > g.busySince {
		g.busy += t - g.busySince
	}
	for _, other := range g.running {
		select {
		case other.wake <- struct{}{}:
		default: // already woken
		}
	}
	return in.shared
}

// occupy runs an execution of solo compute time d that started at t0 on
// the instance's device. It returns when the execution ended (engine
// clock), whether it shared a GPU with another execution at any time, and
// false when the scheduler stopped first. On a GPU the execution takes
// longer while others share it; on the CPU it takes d.
func (in *instance) occupy(t0 int64, d time.Duration) (t1 int64, shared, ok bool) {
	s := in.s
	g := in.gpu
	if g == nil {
		ok = d <= 0 || in.sleeper.sleep(d, nil, s.stop)
		return s.e.now(), false, ok
	}
	select {
	case <-in.wake: // left over from an earlier execution
	default:
	}
	done, left := g.begin(t0, d, in)
	ok = true
	for left > 0 && ok {
		ok = in.sleeper.sleep(left, in.wake, s.stop)
		left = g.left(s.e.now(), done)
	}
	t1 = s.e.now()
	shared = g.end(t1, in)
	return t1, shared, ok
}
