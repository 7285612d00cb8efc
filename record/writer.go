package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tritontop/tritontop/stats"
)

// Writer appends a run file: the header at Create, one line per
// WriteSnapshot, the summary at Close. Its methods may be called from
// different goroutines; each line reaches the file whole, in one write.
type Writer struct {
	mu     sync.Mutex
	path   string
	out    io.Writer
	file   *os.File // nil for stdout
	closed bool
	line   []byte // reused line buffer
	addErr error  // the first failure of Add
}

// Create opens a run file at path and writes its header line. The path "-"
// writes to standard output. An existing non-empty regular file is refused
// rather than overwritten or appended to: a run file holds one run. The
// header's Schema is set (2 for a run over several models, else 1) and its
// Args are passed through RedactArgs.
func Create(path string, h Header) (*Writer, error) {
	if path == "" {
		return nil, errors.New("record: empty run file name; give a path, or - for standard output")
	}
	if path == "-" {
		return NewWriter(os.Stdout, h)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		return nil, fmt.Errorf("record: run file %s already exists and is not empty; choose another name or remove it", path)
	}
	// O_APPEND makes each line's single write land whole at the end even if
	// something else appends, and a crash tears at most the last line.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("record: create run file: %w", err)
	}
	// 0644 whatever the umask: a run file is meant to be shared.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return nil, fmt.Errorf("record: create run file: %w", err)
	}
	w := &Writer{path: path, file: f, out: f}
	if err := w.start(h); err != nil {
		w.file.Close()
		return nil, err
	}
	return w, nil
}

// NewWriter writes a run to out (standard output, a pipe), starting with
// its header line; Path reports "-". Lines reach out whole, one Write each.
func NewWriter(out io.Writer, h Header) (*Writer, error) {
	w := &Writer{path: "-", out: out}
	if err := w.start(h); err != nil {
		return nil, err
	}
	return w, nil
}

// start writes the header line.
func (w *Writer) start(h Header) error {
	h.Schema = schemaOf(h)
	h.Args = RedactArgs(h.Args)
	if h.Args == nil {
		h.Args = []string{}
	}
	return w.writeLine(headerLine{Type: TypeHeader, Header: h})
}

// Path is the file the writer appends to ("-" for standard output).
func (w *Writer) Path() string { return w.path }

// WriteSnapshot appends one tick's snapshot line.
func (w *Writer) WriteSnapshot(s stats.Snapshot) error {
	return w.writeLine(snapshotLine{Type: TypeSnapshot, Snapshot: s})
}

// WriteStep appends a measured step of a stepped run.
func (w *Writer) WriteStep(st Step) error {
	return w.writeLine(stepLine{Type: TypeStep, Step: st})
}

// Add appends one tick's snapshot line, as a sink of the run's snapshots: it
// stops writing at the first failure, which Close then returns.
func (w *Writer) Add(s stats.Snapshot) {
	w.mu.Lock()
	failed := w.addErr != nil
	w.mu.Unlock()
	if failed {
		return
	}
	if err := w.WriteSnapshot(s); err != nil {
		w.mu.Lock()
		w.addErr = err
		w.mu.Unlock()
	}
}

// Sync commits the file's contents to stable storage (fsync). Lines are
// already written through to the kernel; Sync is only needed to survive a
// machine crash, not a process crash.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file == nil || w.closed {
		return nil
	}
	if err := w.file.Sync(); err != nil {
		return fmt.Errorf("record: sync run file %s: %w", w.path, err)
	}
	return nil
}

// Close appends the summary line and closes the file (standard output is
// left open). It returns the first failure of Add, if any, or of the summary
// line. Closing twice is an error-free no-op.
func (w *Writer) Close(sum Summary) error {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return nil
	}
	err := w.writeLine(summaryLine{Type: TypeSummary, Summary: sum})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.addErr != nil {
		err = w.addErr
	}
	w.closed = true
	if w.file != nil {
		if cerr := w.file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("record: close run file %s: %w", w.path, cerr)
		}
	}
	return err
}

func (w *Writer) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("record: encode %T: %w", v, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("record: run file %s is closed", w.path)
	}
	w.line = append(append(w.line[:0], b...), '\n')
	// One Write per line: os.File hands it to a single write(2), so the
	// line is on its way to the disk (no user-space buffer) when we return.
	if _, err := w.out.Write(w.line); err != nil {
		return fmt.Errorf("record: write run file %s: %w", w.path, err)
	}
	return nil
}
