package report

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/load"
	"github.com/tritontop/tritontop/stats"
)

// ProfileExport writes perf_analyzer's profile export (--profile-export-file):
// one JSON document with an experiment per load level, each with every
// successful request's send timestamp and response timestamps (ns since
// the Unix epoch) and the level's window boundaries, then the version, the
// service kind and the endpoint. It is written as the run goes, request by
// request: nothing per request is held but the results of a level's first
// moments, until the previous level's last results have arrived.
//
// It sits between a driver and its collector (Tap), hears the driver's
// changes of load (LoadChanged, before the collector's), and is a sink of
// the run's snapshots, whose tick boundaries are the window boundaries
// (tritontop's measurement windows are whole ticks).
type ProfileExport struct {
	f       *os.File
	w       *bufio.Writer
	epoch   time.Time
	version string

	mu         sync.Mutex
	changes    []load.Change // target changes not yet taken by the writer
	boundaries []time.Time   // tick ends not yet taken by the writer

	// Writer goroutine state.
	cur         load.Target
	curStart    time.Duration
	wrote       int  // requests written in the current experiment
	started     bool // an experiment is open
	next        []load.Change
	held        []driver.Result // results of the next experiments, until the current one ends
	experiments int             // experiments begun
	count       int64
	tapped      bool
	quit        chan struct{} // closed by Close: nobody reads the tap's output any more
	done        chan struct{}
}

// profileSettle is how long after a change of load the experiment before
// it stays open for results still on their way (the collector waits 100
// ms for a tick's).
const profileSettle = 250 * time.Millisecond

// CreateProfileExport creates the export file at path for a run whose
// results count from epoch, starting at load initial; version is the
// tool's, written as perf_analyzer writes its own.
func CreateProfileExport(path string, epoch time.Time, initial load.Target, version string) (*ProfileExport, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create --profile-export-file: %w", err)
	}
	p := &ProfileExport{f: f, w: bufio.NewWriterSize(f, 64<<10), epoch: epoch, version: version, cur: initial, quit: make(chan struct{}), done: make(chan struct{})}
	p.w.WriteString(`{"experiments":[`)
	return p, nil
}

// Tap returns the channel the collector reads instead of in: every batch
// is written to the export, then passed on. It is closed after in is.
func (p *ProfileExport) Tap(in <-chan []driver.Result) <-chan []driver.Result {
	out := make(chan []driver.Result, cap(in))
	p.tapped = true
	go func() {
		defer close(p.done)
		defer close(out)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case batch, ok := <-in:
				if !ok {
					p.finish()
					return
				}
				p.take(time.Since(p.epoch))
				for _, r := range batch {
					p.add(r)
				}
				select {
				case out <- batch:
				case <-p.quit:
				}
			case <-tick.C:
				p.take(time.Since(p.epoch))
			}
		}
	}()
	return out
}

// LoadChanged hears a change of load; it only queues it, for it is called
// with the driver's lock held.
func (p *ProfileExport) LoadChanged(c load.Change) {
	p.mu.Lock()
	p.changes = append(p.changes, c)
	p.mu.Unlock()
}

// Add implements Sink: a tick's end is a window boundary.
func (p *ProfileExport) Add(s stats.Snapshot) {
	p.mu.Lock()
	p.boundaries = append(p.boundaries, s.Time)
	p.mu.Unlock()
}

// take moves queued changes of target to the writer and ends the current
// experiment once the next has lasted profileSettle.
func (p *ProfileExport) take(now time.Duration) {
	p.mu.Lock()
	for _, c := range p.changes {
		last := p.cur
		if len(p.next) > 0 {
			last = p.next[len(p.next)-1].State.Target
		}
		if c.State.Target != last && !c.State.Draining {
			p.next = append(p.next, c)
		}
	}
	p.changes = p.changes[:0]
	p.mu.Unlock()
	for len(p.next) > 0 && now-p.next[0].At >= profileSettle {
		p.endExperiment(p.next[0].At)
		p.cur, p.curStart = p.next[0].State.Target, p.next[0].At
		p.next = p.next[1:]
		held := p.held
		p.held = nil
		for _, r := range held {
			p.add(r)
		}
	}
}

// add writes a successful request into its experiment, or holds it while
// the experiment before is still open.
func (p *ProfileExport) add(r driver.Result) {
	if r.Err != nil || r.Cancelled {
		return
	}
	if len(p.next) > 0 && r.Sent >= p.next[0].At {
		p.held = append(p.held, r)
		return
	}
	if !p.started {
		p.startExperiment()
	}
	if p.wrote > 0 {
		p.w.WriteByte(',')
	}
	p.wrote++
	p.count++
	b := p.w.AvailableBuffer()
	b = append(b, `{"timestamp":`...)
	b = strconv.AppendInt(b, p.epoch.Add(r.Sent).UnixNano(), 10)
	b = append(b, `,"request_inputs":{},"response_timestamps":[`...)
	if r.Decoupled && r.Timing != nil && r.Responses > 0 {
		at := r.Timing.First
		b = strconv.AppendInt(b, p.epoch.Add(at).UnixNano(), 10)
		for _, g := range r.Timing.Gaps {
			at += g
			b = append(b, ',')
			b = strconv.AppendInt(b, p.epoch.Add(at).UnixNano(), 10)
		}
	} else {
		b = strconv.AppendInt(b, p.epoch.Add(r.Done).UnixNano(), 10)
	}
	b = append(b, `],"response_outputs":[]}`...)
	p.w.Write(b)
}

// startExperiment opens the current target's experiment.
func (p *ProfileExport) startExperiment() {
	if p.experiments > 0 {
		p.w.WriteByte(',')
	}
	p.experiments++
	p.w.WriteString(`{"experiment":{"mode":`)
	if p.cur.Open() {
		p.w.WriteString(`"request_rate","value":`)
		p.w.WriteString(strconv.FormatFloat(p.cur.Rate, 'f', -1, 64))
	} else {
		p.w.WriteString(`"concurrency","value":`)
		p.w.WriteString(strconv.Itoa(p.cur.Concurrency))
	}
	p.w.WriteString(`},"requests":[`)
	p.started, p.wrote = true, 0
}

// endExperiment closes the current experiment (if it has a request) with
// the window boundaries up to end.
func (p *ProfileExport) endExperiment(end time.Duration) {
	if !p.started {
		return
	}
	endAt := p.epoch.Add(end)
	p.w.WriteString(`],"window_boundaries":[`)
	b := p.w.AvailableBuffer()
	b = strconv.AppendInt(b, p.epoch.Add(p.curStart).UnixNano(), 10)
	p.mu.Lock()
	rest := p.boundaries[:0]
	for _, t := range p.boundaries {
		switch {
		case t.After(endAt):
			rest = append(rest, t)
		case t.After(p.epoch.Add(p.curStart)):
			b = append(b, ',')
			b = strconv.AppendInt(b, t.UnixNano(), 10)
		}
	}
	p.boundaries = rest
	p.mu.Unlock()
	p.w.Write(b)
	p.w.WriteString(`]}`)
	p.started = false
}

// finish ends the last experiment once the driver has no more results.
func (p *ProfileExport) finish() {
	end := time.Since(p.epoch)
	p.take(end + profileSettle) // every change has settled: no result is left
	p.endExperiment(end)
}

// Requests is the number of requests written; call it after Close.
func (p *ProfileExport) Requests() int64 { return p.count }

// Close waits for the tapped channel to be drained and closed, writes the
// end of the document and closes the file.
func (p *ProfileExport) Close() error {
	close(p.quit)
	if !p.tapped {
		p.finish()
		close(p.done)
	}
	<-p.done
	fmt.Fprintf(p.w, `],"version":%q,"service_kind":"triton","endpoint":""}`+"\n", p.version)
	err := p.w.Flush()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write --profile-export-file: %w", err)
	}
	return nil
}
