package sim

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
)

// The memory budget is one count of the bytes the simulator holds for
// requests at once, over gRPC and HTTP: messages and bodies as received,
// the tensors decoded from them, and the outputs being built and encoded.
// Every place that allocates for a request reserves its bytes first; a
// request that does not fit is refused with RESOURCE_EXHAUSTED over gRPC
// and 503 over HTTP (Triton's status when it cannot take a request now),
// and the process lives. What it costs per request is in docs/limits.md.
const (
	// MinMemoryBudget is the smallest budget accepted (1 MiB): below it no
	// request of any use fits.
	MinMemoryBudget = 1 << 20
	// MemoryBudgetOverhead is what the process holds beyond its budget:
	// the runtime, the repository and its statistics, connection buffers,
	// and garbage the collector has not yet taken back. With
	// Config.SetGoMemoryLimit the Go runtime's soft memory limit is the
	// budget plus this.
	MemoryBudgetOverhead = 256 << 20
)

// memBudget counts the bytes held for requests. Reserving is one atomic
// add: two requests that race at the limit may both be refused, never both
// admitted over it.
type memBudget struct {
	limit   int64
	used    atomic.Int64
	peak    atomic.Int64 // the most reserved at once
	refused atomic.Int64
}

func newMemBudget(limit int64) *memBudget { return &memBudget{limit: limit} }

// reserve takes n bytes, or nothing and an error saying why.
func (b *memBudget) reserve(n int64) error {
	if n <= 0 {
		return nil
	}
	u := b.used.Add(n)
	if u > b.limit {
		b.used.Add(-n)
		b.refused.Add(1)
		return b.refusal(u-n, n)
	}
	for p := b.peak.Load(); u > p && !b.peak.CompareAndSwap(p, u); p = b.peak.Load() {
	}
	return nil
}

// release gives back n reserved bytes.
func (b *memBudget) release(n int64) {
	if n > 0 {
		b.used.Add(-n)
	}
}

// Held is the bytes reserved now.
func (b *memBudget) Held() int64 { return b.used.Load() }

// refusal is the answer to a request that needs n more bytes while held
// are reserved: RESOURCE_EXHAUSTED, which the HTTP endpoint answers as 503.
func (b *memBudget) refusal(held, n int64) error {
	if n > b.limit {
		return &kserve.Error{Code: codes.ResourceExhausted, Message: fmt.Sprintf(
			"Request too large for the server's memory: it needs %d bytes, more than the whole memory budget of %d bytes; send a smaller request (tritontop sim --memory-budget raises the budget)",
			n, b.limit)}
	}
	return &kserve.Error{Code: codes.ResourceExhausted, Message: fmt.Sprintf(
		"Server busy: it holds %d bytes for requests and this one needs %d more, over its memory budget of %d bytes; retry later (tritontop sim --memory-budget raises the budget)",
		held, n, b.limit)}
}

// budgetHold is what one request, or one gRPC call, has reserved; close
// gives it all back. A call's messages are reserved as their length
// arrives (pushMessage, on the connection's reader goroutine) and taken in
// order by the handler (awaitMessage before reading one, popMessage after),
// each request giving its share back when it is answered.
type budgetHold struct {
	b *memBudget

	mu       sync.Mutex
	held     int64
	closed   bool
	ended    bool           // the client sends no more messages
	messages []heldMessage  // messages not yet taken by a request
	first    [1]heldMessage // messages' first backing array: a unary call's one
	wake     chan struct{}  // closed when a message is pushed or the messages end
}

// heldMessage is one message's reservation: cost in all, of which decoded
// is for the message once decoded (decoding it may need more); or why it
// was refused.
type heldMessage struct {
	cost, decoded int64
	refusal       error
}

func newBudgetHold(b *memBudget) *budgetHold { return &budgetHold{b: b} }

// grow reserves n more bytes. On a closed hold it reserves nothing and
// succeeds: the request is gone and what it still does is moot.
func (h *budgetHold) grow(n int64) error {
	if h == nil || n <= 0 {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	if err := h.b.reserve(n); err != nil {
		return err
	}
	h.held += n
	return nil
}

// give returns n of the hold's bytes (at most what it holds).
func (h *budgetHold) give(n int64) {
	if h == nil || n <= 0 {
		return
	}
	h.mu.Lock()
	n = min(n, h.held)
	h.held -= n
	h.mu.Unlock()
	h.b.release(n)
}

// closeKeeping returns everything the hold has but keep bytes, which the
// returned kept gives back when its buffer is freed (mem.BufferPool's Put);
// later grows are free.
func (h *budgetHold) closeKeeping(keep int64) *keptBytes {
	h.mu.Lock()
	keep = min(keep, h.held)
	n := h.held - keep
	h.held, h.closed, h.messages = 0, true, nil
	h.wakeLocked()
	h.mu.Unlock()
	h.b.release(n)
	return &keptBytes{b: h.b, n: keep}
}

// keptBytes are reserved bytes of a buffer that outlives its request (an
// encoded response being written): a mem.BufferPool whose Put, when the
// buffer is freed, gives them back.
type keptBytes struct {
	b    *memBudget
	n    int64
	once sync.Once
}

// Get implements mem.BufferPool; keptBytes gives no buffers.
func (k *keptBytes) Get(n int) *[]byte {
	b := make([]byte, n)
	return &b
}

// Put implements mem.BufferPool: the buffer is freed.
func (k *keptBytes) Put(*[]byte) { k.once.Do(func() { k.b.release(k.n) }) }

// close returns everything the hold has and makes later grows free.
func (h *budgetHold) close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	n := h.held
	h.held, h.closed, h.messages = 0, true, nil
	h.wakeLocked()
	h.mu.Unlock()
	h.b.release(n)
}

func (h *budgetHold) wakeLocked() {
	if h.wake != nil {
		close(h.wake)
		h.wake = nil
	}
}

// isClosed reports whether the hold was closed.
func (h *budgetHold) isClosed() bool {
	if h == nil {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Held is the bytes the hold has reserved.
func (h *budgetHold) Held() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// pushMessage reserves cost bytes for the call's next message, decoded of
// them for the message decoded, or records its refusal.
func (h *budgetHold) pushMessage(cost, decoded int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	m := heldMessage{cost: cost, decoded: decoded}
	if err := h.b.reserve(cost); err != nil {
		m = heldMessage{refusal: err}
	} else {
		h.held += cost
	}
	if h.messages == nil {
		h.messages = h.first[:0]
	}
	h.messages = append(h.messages, m)
	h.wakeLocked()
}

// endMessages records that the client sends no more messages.
func (h *budgetHold) endMessages() {
	h.mu.Lock()
	h.ended = true
	h.wakeLocked()
	h.mu.Unlock()
}

// awaitMessage waits until the call's next message has been reserved or
// refused (or no message is coming), and returns its refusal. The handler
// calls it before reading a message: a refused message is never read.
func (h *budgetHold) awaitMessage(ctx context.Context) error {
	if h == nil {
		return nil
	}
	for {
		h.mu.Lock()
		if len(h.messages) > 0 || h.ended || h.closed {
			var err error
			if len(h.messages) > 0 {
				err = h.messages[0].refusal
			}
			h.mu.Unlock()
			return err
		}
		if h.wake == nil {
			h.wake = make(chan struct{})
		}
		wake := h.wake
		h.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil // reading the message fails as the call ends
		}
	}
}

// decoding reserves what decoding the next message costs beyond what its
// reservation has for it (decoded bytes in all); if that does not fit, the
// message is refused and the error returned.
func (h *budgetHold) decoding(decoded int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.messages) == 0 {
		return nil
	}
	m := &h.messages[0]
	more := decoded - m.decoded
	if more <= 0 || m.refusal != nil {
		return m.refusal
	}
	if err := h.b.reserve(more); err != nil {
		m.refusal = err
		return err
	}
	h.held += more
	m.cost += more
	m.decoded = decoded
	return nil
}

// popMessage takes the next message's reservation, or its refusal.
func (h *budgetHold) popMessage() (int64, error) {
	if h == nil {
		return 0, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.messages) == 0 {
		return 0, nil
	}
	m := h.messages[0]
	h.messages = h.messages[1:]
	if len(h.messages) == 0 {
		h.messages = nil
	}
	return m.cost, m.refusal
}

// budgetShare is one request's part of a hold: n is what the request gives
// back when it is answered (a stream's requests do; a unary request's hold
// is closed whole when its call ends).
type budgetShare struct {
	hold *budgetHold
	n    int64
}

// grow reserves n more bytes for the request.
func (s *budgetShare) grow(n int64) error {
	if s == nil {
		return nil
	}
	if err := s.hold.grow(n); err != nil {
		return err
	}
	s.n += n
	return nil
}

// giveBack returns the request's part.
func (s *budgetShare) giveBack() {
	if s != nil {
		s.hold.give(s.n)
		s.n = 0
	}
}

// setGoMemoryLimit sets the Go runtime's soft memory limit to n bytes when
// on and GOMEMLIMIT is not set, and returns what restores the one before.
func setGoMemoryLimit(on bool, n int64) (restore func()) {
	if !on || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetMemoryLimit(n)
	return func() { debug.SetMemoryLimit(prev) }
}
