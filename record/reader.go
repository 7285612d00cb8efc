package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/stats"
)

// Run is a whole run file in memory.
type Run struct {
	Header    Header
	Snapshots []stats.Snapshot
	// Steps are the measured steps of a stepped run, in order.
	Steps []Step
	// Summary is nil when the run ended without writing one (killed).
	Summary *Summary
	// Truncated is set when the last line was incomplete or garbled (the
	// writer died mid-line) and was skipped.
	Truncated bool
}

// Reader streams a run file: the header at Open, then snapshots one by one.
type Reader struct {
	name      string
	br        *bufio.Reader
	closer    io.Closer
	line      int
	header    Header
	steps     []Step
	summary   *Summary
	truncated bool
	done      bool
	// ticks counts the snapshots read; lastSeq is the last one's number.
	ticks, lastSeq int
}

// Open opens a run file and reads its header. The path "-" reads standard
// input.
func Open(path string) (*Reader, error) {
	if path == "-" {
		return NewReader(os.Stdin, "standard input")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("record: open run file: %w", err)
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a run file from r and reads its header; name is used in
// error messages.
func NewReader(r io.Reader, name string) (*Reader, error) {
	rd := &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10)}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// ReadAll reads a whole run file.
func ReadAll(path string) (*Run, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	run := &Run{Header: r.Header()}
	for {
		s, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		run.Snapshots = append(run.Snapshots, s)
	}
	run.Steps = r.Steps()
	run.Summary = r.Summary()
	run.Truncated = r.Truncated()
	return run, nil
}

// Header is the run file's header line.
func (r *Reader) Header() Header { return r.header }

// Summary is the run's summary line, nil until Next has returned io.EOF and
// nil if the file has none.
func (r *Reader) Summary() *Summary { return r.summary }

// Steps are the measured steps read so far: a step line follows the last
// snapshot it covers, so after Next returns a snapshot, Steps holds every
// step that ended before it.
func (r *Reader) Steps() []Step { return r.steps }

// Truncated reports whether the last line was incomplete and skipped; it is
// final once Next has returned io.EOF.
func (r *Reader) Truncated() bool { return r.truncated }

// Close closes the underlying file, if Open opened one.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	err := r.closer.Close()
	r.closer = nil
	return err
}

// Next returns the next snapshot in recorded order, or io.EOF after the last
// one. Lines of unknown type are skipped. A garbled line followed by more
// data is an error naming its line number; a garbled last line is taken as
// the trace of a writer that died mid-line and ends the run (Truncated).
func (r *Reader) Next() (stats.Snapshot, error) {
	for !r.done {
		b, err := r.nextLine()
		if err != nil {
			return stats.Snapshot{}, err
		}
		if b == nil {
			r.done = true
			break
		}
		var probe lineProbe
		if err := json.Unmarshal(b, &probe); err != nil {
			if r.tornTail() {
				break
			}
			return stats.Snapshot{}, r.lineError("not a JSON line", err)
		}
		switch probe.Type {
		case TypeSnapshot:
			var l snapshotLine
			if err := json.Unmarshal(b, &l); err != nil {
				return stats.Snapshot{}, r.lineError("bad snapshot line", err)
			}
			if mayHoldControl(b) {
				textsafe.Sanitize(&l.Snapshot)
			}
			if r.ticks > 0 && l.Snapshot.Seq <= r.lastSeq {
				return stats.Snapshot{}, r.lineError(fmt.Sprintf("tick %d comes after tick %d: tick numbers only grow in a run file (two runs in one file?)", l.Snapshot.Seq, r.lastSeq), nil)
			}
			r.ticks++
			r.lastSeq = l.Snapshot.Seq
			return l.Snapshot, nil
		case TypeStep:
			var l stepLine
			if err := json.Unmarshal(b, &l); err != nil {
				return stats.Snapshot{}, r.lineError("bad step line", err)
			}
			textsafe.Sanitize(&l.Step)
			r.steps = append(r.steps, l.Step)
		case TypeSummary:
			var l summaryLine
			if err := json.Unmarshal(b, &l); err != nil {
				return stats.Snapshot{}, r.lineError("bad summary line", err)
			}
			sum := l.Summary
			textsafe.Sanitize(&sum)
			r.summary = &sum
		case TypeHeader:
			return stats.Snapshot{}, r.lineError("a second header line; a run file holds one run", nil)
		}
	}
	return stats.Snapshot{}, io.EOF
}

func (r *Reader) readHeader() error {
	b, err := r.nextLine()
	if err != nil {
		return err
	}
	if b == nil {
		return fmt.Errorf("record: run file %s is empty", r.name)
	}
	var probe lineProbe
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("record: %s is not a tritontop run file (line %d is not JSON: %s)", r.name, r.line, textsafe.Excerpt(err.Error(), textsafe.MaxErrorText))
	}
	if probe.Type != TypeHeader {
		return fmt.Errorf("record: %s is not a tritontop run file (line %d is not a header line)", r.name, r.line)
	}
	if probe.Schema == nil {
		return fmt.Errorf("record: %s: line %d: header has no schema version", r.name, r.line)
	}
	if *probe.Schema < 1 {
		return fmt.Errorf("record: %s: line %d: schema %d is not a run-file schema version (1 to %d)", r.name, r.line, *probe.Schema, SchemaVersion)
	}
	if *probe.Schema > SchemaVersion {
		return fmt.Errorf("record: %s uses run-file schema %d, newer than this tritontop reads (%d); upgrade tritontop", r.name, *probe.Schema, SchemaVersion)
	}
	var l headerLine
	if err := json.Unmarshal(b, &l); err != nil {
		return r.lineError("bad header line", err)
	}
	textsafe.Sanitize(&l.Header)
	r.header = l.Header
	return nil
}

// mayHoldControl reports whether a JSON line could decode to a string with
// a character textsafe escapes: one written as a \u escape, or any byte
// outside printable ASCII (DEL, C1 and bidirectional controls are
// multi-byte or high in UTF-8). Snapshot lines tritontop writes have
// neither, so reading them costs no reflection.
func mayHoldControl(b []byte) bool {
	if bytes.Contains(b, []byte(`\u`)) {
		return true
	}
	for _, c := range b {
		if c >= 0x7f {
			return true
		}
	}
	return false
}

// nextLine returns the next non-blank line without its newline, or nil at
// the end of the input.
func (r *Reader) nextLine() ([]byte, error) {
	for {
		b, err := r.br.ReadBytes('\n')
		if len(b) > 0 {
			r.line++
			if t := bytes.TrimSpace(b); len(t) > 0 {
				return t, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("record: read %s: %w", r.name, err)
		}
	}
}

// tornTail reports whether nothing but blanks or NUL bytes (what a crash can
// leave at the end of a file) follows the current line, and if so marks the
// run truncated and finished.
func (r *Reader) tornTail() bool {
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			r.truncated, r.done = true, true
			return true
		}
		switch c {
		case ' ', '\t', '\r', '\n', 0:
		default:
			r.br.UnreadByte()
			return false
		}
	}
}

func (r *Reader) lineError(what string, err error) error {
	if err == nil {
		return fmt.Errorf("record: %s: line %d: %s", r.name, r.line, what)
	}
	return fmt.Errorf("record: %s: line %d: %s: %s", r.name, r.line, what, textsafe.Excerpt(err.Error(), textsafe.MaxErrorText))
}
