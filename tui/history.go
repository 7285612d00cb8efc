package tui

import "github.com/tritontop/tritontop/stats"

// history is a fixed-size ring of the latest snapshots, oldest first.
type history struct {
	buf  []stats.Snapshot
	head int // index of the oldest
	n    int
}

func newHistory(capacity int) *history {
	return &history{buf: make([]stats.Snapshot, capacity)}
}

// push adds s, dropping the oldest snapshot when full.
func (h *history) push(s stats.Snapshot) {
	if h.n < len(h.buf) {
		h.buf[(h.head+h.n)%len(h.buf)] = s
		h.n++
		return
	}
	h.buf[h.head] = s
	h.head = (h.head + 1) % len(h.buf)
}

// len is the number of snapshots held.
func (h *history) len() int { return h.n }

// at returns the i-th snapshot, 0 being the oldest held.
func (h *history) at(i int) *stats.Snapshot {
	return &h.buf[(h.head+i)%len(h.buf)]
}

// fromEnd returns the snapshot i places before the latest (0: the latest).
func (h *history) fromEnd(i int) *stats.Snapshot {
	return h.at(h.n - 1 - i)
}

// latest returns the newest snapshot, or nil before the first one.
func (h *history) latest() *stats.Snapshot {
	if h.n == 0 {
		return nil
	}
	return h.fromEnd(0)
}

// truncateFrom drops the newest snapshots from the first with Seq ≥ seq on.
func (h *history) truncateFrom(seq int) {
	for h.n > 0 && h.fromEnd(0).Seq >= seq {
		*h.fromEnd(0) = stats.Snapshot{}
		h.n--
	}
}
