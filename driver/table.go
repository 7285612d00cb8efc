package driver

import "sync/atomic"

// chunkSize is the number of workers per chunk of a workerTable.
const chunkSize = 256

type workerChunk [chunkSize]atomic.Pointer[worker]

// workerTable holds a run's workers by id. One goroutine (the pacer) adds;
// stream receivers and the result flusher read without locks. Workers live
// in fixed chunks, so adding one copies at most the chunk index, never the
// workers: an open loop against a stalled server may start many thousands.
type workerTable struct {
	chunks atomic.Pointer[[]*workerChunk]
	n      atomic.Int64
}

// add appends w, whose id must be the table's length.
func (t *workerTable) add(w *worker) {
	i := int(t.n.Load())
	var chunks []*workerChunk
	if p := t.chunks.Load(); p != nil {
		chunks = *p
	}
	if i/chunkSize == len(chunks) {
		next := make([]*workerChunk, len(chunks)+1)
		copy(next, chunks)
		next[len(chunks)] = new(workerChunk)
		t.chunks.Store(&next)
		chunks = next
	}
	chunks[i/chunkSize][i%chunkSize].Store(w)
	t.n.Store(int64(i + 1))
}

// len returns the number of workers added.
func (t *workerTable) len() int { return int(t.n.Load()) }

// get returns worker i, or nil if there is none.
func (t *workerTable) get(i int) *worker {
	p := t.chunks.Load()
	if p == nil || i < 0 || i/chunkSize >= len(*p) {
		return nil
	}
	return (*p)[i/chunkSize][i%chunkSize].Load()
}

// each calls f for every worker.
func (t *workerTable) each(f func(*worker)) {
	n := t.len()
	for i := 0; i < n; i++ {
		if w := t.get(i); w != nil {
			f(w)
		}
	}
}
