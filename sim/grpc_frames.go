package sim

import (
	"context"
	"encoding/binary"
)

// HTTP/2 (RFC 9113) as far as the budget needs it: the frames a client
// sends, and in DATA frames gRPC's message framing (one flag byte, then the
// message's length as four big-endian bytes, then the message).
const (
	h2PrefaceLen     = 24 // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	h2FrameHeaderLen = 9
	h2FrameData      = 0x0
	h2FrameHeaders   = 0x1
	h2FrameRSTStream = 0x3
	h2FrameContinue  = 0x9
	h2FlagEndStream  = 0x1
	h2FlagEndHeaders = 0x4
	h2FlagPadded     = 0x8
	grpcPrefixLen    = 5
	// minSweep is how many calls a connection follows before it first
	// sweeps out those that have ended.
	minSweep = 64
)

// frameScan follows the bytes a gRPC client sends on one connection, as
// the server's HTTP/2 framer reads them, frame by frame: it knows the
// stream of the last header block read (the stream the server is opening
// when its tap runs), and in each stream's DATA it finds every message's
// length as soon as its prefix is read, and reserves (or refuses) the
// message in the call's hold. The call's handler waits for that verdict
// before it reads the message, so a refused message is never read.
//
// Its state is used only by the connection's reader goroutine (the
// server's transport reads a connection on one goroutine and runs its tap
// there), so it takes no lock.
type frameScan struct {
	budget *grpcBudget

	preface  int // bytes of the connection preface still to pass
	hdr      [h2FrameHeaderLen]byte
	hn       int    // frame header bytes read
	typ      byte   // the current frame's type
	flags    byte   // and flags
	stream   uint32 // and stream
	left     int    // payload bytes of the current frame still to come
	padByte  bool   // a PADDED DATA frame whose pad length is next
	dataLeft int    // DATA bytes (not padding) of the current frame still to come

	lastHeaders      uint32 // stream of the last complete header block read
	lastHeadersEnded bool   // and whether it ended the stream (no message)
	calls            map[uint32]*msgFraming
	sweepAt          int         // len(calls) at which ended calls are swept out
	cur              *msgFraming // the stream of the current DATA frame
}

func newFrameScan(b *grpcBudget) *frameScan {
	return &frameScan{budget: b, preface: h2PrefaceLen, calls: map[uint32]*msgFraming{}, sweepAt: minSweep}
}

// msgFraming follows gRPC's message framing in one call's DATA.
type msgFraming struct {
	hold   *budgetHold
	ctx    context.Context // the call's
	prefix [grpcPrefixLen]byte
	pn     int   // prefix bytes read
	left   int64 // message bytes still to come
}

// budgetedCall is a call's hold and the state of its DATA, allocated together.
type budgetedCall struct {
	hold    budgetHold
	framing msgFraming
}

// bind follows the DATA of the stream whose header block was read last, for
// the call m. The server calls it (through its tap) right after reading that
// block. A call's handler closes its hold when it is done; a call whose
// handler never ran (grpc-go refused it first) has its hold closed when a
// sweep finds its context done, or when the connection ends.
func (s *frameScan) bind(m *msgFraming) {
	if s.lastHeadersEnded {
		m.hold.endMessages()
	}
	if len(s.calls) >= s.sweepAt {
		s.sweep()
		s.sweepAt = max(minSweep, 2*len(s.calls))
	}
	s.calls[s.lastHeaders] = m
}

// sweep forgets the calls that have ended, closing the holds of those
// whose handler did not.
func (s *frameScan) sweep() {
	for id, m := range s.calls {
		switch {
		case m.hold.isClosed():
		case m.ctx.Err() != nil:
			m.hold.close()
		default:
			continue
		}
		delete(s.calls, id)
	}
}

// closeAll closes every call's hold: the connection is gone.
func (s *frameScan) closeAll() {
	for id, m := range s.calls {
		m.hold.close()
		delete(s.calls, id)
	}
}

// scan follows p, bytes of the connection just read by the server.
func (s *frameScan) scan(p []byte) {
	for len(p) > 0 {
		switch {
		case s.preface > 0:
			n := min(s.preface, len(p))
			s.preface -= n
			p = p[n:]
		case s.hn < h2FrameHeaderLen:
			n := copy(s.hdr[s.hn:], p)
			s.hn += n
			p = p[n:]
			if s.hn == h2FrameHeaderLen {
				s.startFrame()
			}
		default:
			n := min(s.left, len(p))
			if s.typ == h2FrameData {
				s.data(p[:n])
			}
			s.left -= n
			p = p[n:]
			if s.left == 0 {
				s.endFrame()
			}
		}
	}
}

func (s *frameScan) startFrame() {
	h := s.hdr[:]
	s.left = int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	s.typ, s.flags = h[3], h[4]
	s.stream = binary.BigEndian.Uint32(h[5:]) & 0x7fffffff
	s.padByte = s.typ == h2FrameData && s.flags&h2FlagPadded != 0
	s.dataLeft = s.left
	if s.padByte {
		s.dataLeft = 0 // known once the pad length is read
	}
	s.cur = nil
	if s.typ == h2FrameData {
		s.cur = s.calls[s.stream]
	}
	if s.left == 0 {
		s.endFrame()
	}
}

// data follows q, payload bytes of a DATA frame.
func (s *frameScan) data(q []byte) {
	if s.padByte && len(q) > 0 {
		s.padByte = false
		s.dataLeft = max(s.left-1-int(q[0]), 0)
		q = q[1:]
	}
	n := min(s.dataLeft, len(q))
	s.dataLeft -= n
	if s.cur != nil && n > 0 {
		s.cur.read(q[:n], s.budget)
	}
}

func (s *frameScan) endFrame() {
	ends := s.flags&h2FlagEndStream != 0 && (s.typ == h2FrameData || s.typ == h2FrameHeaders)
	switch s.typ {
	case h2FrameHeaders, h2FrameContinue:
		if s.flags&h2FlagEndHeaders != 0 {
			s.lastHeaders = s.stream
			s.lastHeadersEnded = ends || s.typ == h2FrameContinue && s.lastHeadersEnded
		} else if s.typ == h2FrameHeaders {
			s.lastHeadersEnded = ends // carried to its last CONTINUATION
		}
	case h2FrameRSTStream:
		ends = true
	}
	if ends {
		if m := s.calls[s.stream]; m != nil {
			m.hold.endMessages()
		}
	}
	s.hn = 0
}

// read follows q, message bytes of the stream.
func (m *msgFraming) read(q []byte, b *grpcBudget) {
	for len(q) > 0 {
		if m.left > 0 {
			n := int(min(m.left, int64(len(q))))
			m.left -= int64(n)
			q = q[n:]
			continue
		}
		n := copy(m.prefix[m.pn:], q)
		m.pn += n
		q = q[n:]
		if m.pn == grpcPrefixLen {
			m.whole(b)
		}
	}
}

// whole takes a message's complete prefix: the message is reserved, or
// refused, before the server reads it.
func (m *msgFraming) whole(b *grpcBudget) {
	n := int64(binary.BigEndian.Uint32(m.prefix[1:]))
	m.pn, m.left = 0, n
	if n > b.maxMsg {
		// The server refuses it itself ("larger than max"), unread.
		m.hold.endMessages()
		return
	}
	compressed := m.prefix[0] != 0
	m.hold.pushMessage(b.cost(n, compressed), b.decodedShare(n, compressed))
}
