package stats

// A statistics read that has not answered when its tick is emitted leaves
// the tick without server numbers; its answer, when it comes, describes the
// ticks from then until it was read, not the tick after. Each poller (one
// per model and server) follows its late reads on its own: the late answer
// is carried apart by the next tick emitted (ServerLate, on the Snapshot,
// the model's entry and the replica's), and that tick's own numbers come
// from a new read that starts from it.

// lateRead is one poller's late-read state, owned by the Run goroutine.
type lateRead struct {
	// seq is the first tick emitted while the poller's read had not
	// answered (0: none); v is that read's answer once it came, for the
	// next tick to carry.
	seq int
	v   *ServerStats
	// own is set when the read under way, or answered, was started for
	// the tick being cut or waiting, not for one before.
	own bool
}

// lateCell is a late answer handed to a tick: the statistics and the first
// tick they describe.
type lateCell struct {
	v   *ServerStats
	seq int
}

// takeLates, at a tick's end, takes each poller's answer of a read that
// came after the ticks it describes were emitted, so that this tick reads
// its own span (a new read, from the late one) and carries the late one
// apart; and notes, for each poller, whether the read it starts now is
// this tick's own.
func (r *collection) takeLates() {
	if r.server == nil {
		return
	}
	for i := range r.lates {
		l := &r.lates[i]
		busy := r.server.busy[i]
		if l.seq != 0 && !busy {
			if v := r.server.take(i); v != nil {
				l.v = v
			}
		}
		l.own = !busy
	}
}

// afterServerRead takes poller i's late answer as soon as it comes, and, if
// a tick is waiting for its statistics, starts that tick's own read from it.
func (r *collection) afterServerRead(i int) {
	if r.server == nil || i >= len(r.lates) {
		return
	}
	l := &r.lates[i]
	if l.seq == 0 || l.own || l.v != nil {
		return
	}
	if v := r.server.take(i); v != nil {
		l.v = v
		if r.pending != nil || r.open {
			l.own = true
			r.server.start()
		}
	}
}

// noteLate, as tick seq is emitted with poller i's statistics available or
// not, returns the late answer taken for it, and notes that the tick is
// emitted while the poller's read is still running.
func (r *collection) noteLate(i, seq int, available bool) lateCell {
	if r.server == nil || i >= len(r.lates) {
		return lateCell{}
	}
	l := &r.lates[i]
	var out lateCell
	if l.v != nil {
		out = lateCell{l.v, l.seq}
		l.v, l.seq = nil, 0
	}
	if !available && r.server.busy[i] && l.seq == 0 {
		l.seq = seq
	}
	return out
}

// joinLate adds the late answers among cells (AggregateServer; across
// models names no model): nil when none is there, else their sum and the
// first tick any of them describes.
func joinLate(cells []lateCell, acrossModelsToo bool) (*ServerStats, int) {
	var parts []ServerStats
	seq := 0
	for _, c := range cells {
		if c.v == nil {
			continue
		}
		parts = append(parts, *c.v)
		if seq == 0 || c.seq < seq {
			seq = c.seq
		}
	}
	if len(parts) == 0 {
		return nil, 0
	}
	var s ServerStats
	if acrossModelsToo {
		s = acrossModels(parts)
	} else {
		s = AggregateServer(parts)
	}
	return &s, seq
}

// lateOfReplicas hands each replica its late answer, and the tick their
// sum; lates is nil when no answer was late.
func lateOfReplicas(s *Snapshot, lates []lateCell) {
	if lates == nil {
		return
	}
	for i := range s.Replicas {
		if i < len(lates) && lates[i].v != nil {
			s.Replicas[i].ServerLate, s.Replicas[i].ServerLateSeq = lates[i].v, lates[i].seq
		}
	}
	s.ServerLate, s.ServerLateSeq = joinLate(lates, false)
}

// lateOfModels hands the late answers of a run over several models (cells
// model by model, n servers each) to each model's entry (over its
// servers), each replica's (over its models) and the tick (over all).
func lateOfModels(s *Snapshot, lates []lateCell, n int, replicas bool) {
	if lates == nil || n == 0 {
		return
	}
	for m := range s.Models {
		if (m+1)*n > len(lates) {
			break
		}
		s.Models[m].ServerLate, s.Models[m].ServerLateSeq = joinLate(lates[m*n:(m+1)*n], false)
	}
	if replicas {
		col := make([]lateCell, 0, len(s.Models))
		for i := range s.Replicas {
			col = col[:0]
			for m := 0; m*n+i < len(lates); m++ {
				col = append(col, lates[m*n+i])
			}
			s.Replicas[i].ServerLate, s.Replicas[i].ServerLateSeq = joinLate(col, true)
		}
	}
	s.ServerLate, s.ServerLateSeq = joinLate(lates, true)
}
