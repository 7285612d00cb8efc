package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Writer writes a tritontop trace: the header, then a line per request.
// Requests may be written from any goroutine; each line goes out whole.
// Close flushes.
type Writer struct {
	mu    sync.Mutex
	w     *bufio.Writer
	c     io.Closer
	start time.Time
	n     int
	err   error
}

// NewWriter writes h as the trace's first line to w; requests' times count
// from h.StartTime. If w is an io.Closer, Close closes it.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Version = Version
	if h.StartTime.IsZero() {
		h.StartTime = time.Now()
	}
	tw := &Writer{w: bufio.NewWriterSize(w, 64<<10), start: h.StartTime}
	tw.c, _ = w.(io.Closer)
	line, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("trace header: %w", err)
	}
	tw.w.Write(line)
	if err := tw.w.WriteByte('\n'); err != nil {
		return nil, fmt.Errorf("writing the trace: %w", err)
	}
	return tw, nil
}

// Start is the instant the requests' times count from.
func (w *Writer) Start() time.Time { return w.start }

// Write appends r, whose At is set from arrived.
func (w *Writer) Write(r Request, arrived time.Time) error {
	r.At = arrived.Sub(w.start)
	r.AtUS = float64(r.At) / float64(time.Microsecond)
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("trace request: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.w.Write(line)
	if err := w.w.WriteByte('\n'); err != nil {
		w.err = fmt.Errorf("writing the trace: %w", err)
		return w.err
	}
	w.n++
	return nil
}

// Flush writes out the lines buffered so far.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = fmt.Errorf("writing the trace: %w", err)
	}
	return w.err
}

// Count is the number of requests written.
func (w *Writer) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close flushes and closes the underlying writer.
func (w *Writer) Close() error {
	err := w.Flush()
	if w.c != nil {
		if e := w.c.Close(); e != nil && err == nil {
			err = fmt.Errorf("closing the trace: %w", e)
		}
	}
	return err
}
