package triton

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxSSELine is the longest line of a server-sent event stream SSEReader
// takes; a longer one is an error rather than unbounded memory.
const MaxSSELine = 16 << 20

// SSEEvent is one server-sent event: its type ("message" unless an
// "event:" field named another) and its data, the "data:" lines joined
// with newlines. Data is only valid until the next call to Next.
type SSEEvent struct {
	Type string
	Data []byte
	// Size is the event's bytes on the wire, its comments and blank lines
	// before it included.
	Size int
}

// SSEReader reads server-sent events (the WHATWG event-stream format) as
// they arrive: an event may come split over any number of reads, or many in
// one; lines end with LF, CRLF or CR; comment lines (": ...", the keep-alive
// pings servers send) and events without data are skipped; "data:" lines
// of one event are joined with LF; the one space after a field's colon is
// dropped. An event not ended by a blank line when the stream ends is
// dropped, as the format says.
type SSEReader struct {
	r   io.Reader
	buf []byte // read, from pos on not yet taken
	pos int
	err error // the read error that ends the stream, once seen

	data  []byte
	typ   []byte
	size  int
	dirty bool // the event under way has a data field
	cr    bool // the last line ended with CR: an LF right after it is its end
}

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: r, buf: make([]byte, 0, 4096)}
}

// Next returns the next event, io.EOF at the end of the stream, or the
// read's error.
func (s *SSEReader) Next() (SSEEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return SSEEvent{}, io.EOF
			}
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if !s.dirty {
				s.typ = s.typ[:0]
				continue
			}
			ev := SSEEvent{Type: "message", Data: s.data, Size: s.size}
			if len(s.typ) > 0 {
				ev.Type = string(s.typ)
			}
			// Data is handed out; the next event starts a new slice only
			// after the caller is done with this one.
			s.data, s.typ, s.size, s.dirty = s.data[:0], s.typ[:0], 0, false
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "data":
			if s.dirty {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			s.dirty = true
		case "event":
			s.typ = append(s.typ[:0], value...)
		}
		// id and retry mean nothing to a load generator; others are
		// ignored, as the format says.
	}
}

// readLine returns the next line without its end, counting its bytes.
// The line is valid until the next call.
func (s *SSEReader) readLine() ([]byte, error) {
	scanned := 0 // bytes of buf[pos:] known to hold no line end
	for {
		if s.cr && s.pos < len(s.buf) {
			// An LF right after a CR belongs to that CR's line end.
			s.cr = false
			if s.buf[s.pos] == '\n' {
				s.pos++
				s.size++
			}
		}
		rest := s.buf[s.pos:]
		if i := bytes.IndexAny(rest[scanned:], "\r\n"); i >= 0 {
			i += scanned
			line := rest[:i]
			s.cr = rest[i] == '\r'
			s.pos += i + 1
			s.size += i + 1
			return line, nil
		}
		scanned = len(rest)
		if len(rest) > MaxSSELine {
			return nil, fmt.Errorf("server-sent event line longer than %d bytes", MaxSSELine)
		}
		if s.err != nil {
			// The stream ended (or failed) inside a line or an event,
			// which is dropped.
			return nil, s.err
		}
		// Keep the line under way at the front, then read more after it.
		if s.pos > 0 {
			n := copy(s.buf, rest)
			s.buf, s.pos = s.buf[:n], 0
		}
		if len(s.buf) == cap(s.buf) {
			s.buf = append(s.buf, make([]byte, max(cap(s.buf), 4096))...)[:len(s.buf)]
		}
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if err != nil {
			s.err = err
		}
	}
}
