package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// grpcMessage is gRPC's framing of a message of n bytes.
func grpcMessage(n int, compressed bool) []byte {
	b := make([]byte, 5+n)
	if compressed {
		b[0] = 1
	}
	binary.BigEndian.PutUint32(b[1:], uint32(n))
	return b
}

// clientBytes writes what a client sends: the preface, and per stream a
// header block (HEADERS, split into CONTINUATIONs when cont is set) and
// the DATA frames given, each padded when pad is set.
type clientBytes struct {
	buf bytes.Buffer
	fr  *http2.Framer
	enc *hpack.Encoder
	hb  bytes.Buffer
}

func newClientBytes() *clientBytes {
	c := &clientBytes{}
	c.buf.WriteString(http2.ClientPreface)
	c.fr = http2.NewFramer(&c.buf, nil)
	c.enc = hpack.NewEncoder(&c.hb)
	_ = c.fr.WriteSettings()
	return c
}

func (c *clientBytes) headers(stream uint32, endStream, cont bool) {
	c.hb.Reset()
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":path", Value: "/inference.GRPCInferenceService/ModelInfer"},
		{Name: "content-type", Value: "application/grpc"}, {Name: "x-padding", Value: string(make([]byte, 64))}} {
		f.Sensitive = true // never indexed: every block is long enough to split
		_ = c.enc.WriteField(f)
	}
	block := c.hb.Bytes()
	if !cont {
		_ = c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block, EndStream: endStream, EndHeaders: true})
		return
	}
	_ = c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block[:10], EndStream: endStream})
	_ = c.fr.WriteContinuation(stream, false, block[10:20])
	_ = c.fr.WriteContinuation(stream, true, block[20:])
}

// data sends b on stream in frames of at most size bytes.
func (c *clientBytes) data(stream uint32, b []byte, size int, pad bool, endStream bool) {
	for len(b) > 0 || endStream {
		n := min(size, len(b))
		last := n == len(b)
		var padding []byte
		if pad {
			padding = make([]byte, 3)
		}
		_ = c.fr.WriteDataPadded(stream, last && endStream, b[:n], padding)
		b = b[n:]
		if last {
			return
		}
	}
}

// feedScan hands the bytes to a frameScan as the server's framer reads
// them (the preface, then each frame's header and payload, each read in
// pieces of random sizes), binding a call to each header block as the
// server's tap does right after reading it; it returns the calls by stream.
func feedScan(t *testing.T, b []byte, g *grpcBudget, seed uint64) map[uint32]*budgetedCall {
	t.Helper()
	s := newFrameScan(g)
	calls := map[uint32]*budgetedCall{}
	r := rand.New(rand.NewPCG(seed, 1))
	read := func(n int) {
		for n > 0 {
			k := min(n, 1+r.IntN(40))
			s.scan(b[:k])
			b, n = b[k:], n-k
		}
	}
	read(len(http2.ClientPreface))
	for len(b) > 0 {
		length := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
		typ, flags := b[3], b[4]
		read(h2FrameHeaderLen)
		read(length)
		if (typ == h2FrameHeaders || typ == h2FrameContinue) && flags&h2FlagEndHeaders != 0 {
			c := &budgetedCall{}
			c.hold.b = g.b
			c.framing = msgFraming{hold: &c.hold, ctx: context.Background()}
			s.bind(&c.framing)
			calls[s.lastHeaders] = c
		}
	}
	return calls
}

// TestFrameScanReservesEachMessage: however the bytes are cut, padded or
// split across frames, every message of every stream is reserved at three
// times its length as soon as its prefix is read, in order; a stream
// whose header block ends it has no message.
func TestFrameScanReservesEachMessage(t *testing.T) {
	c := newClientBytes()
	c.headers(1, false, false)
	c.data(1, grpcMessage(100, false), 1000, false, true)
	c.headers(3, false, true) // CONTINUATIONs
	two := append(grpcMessage(10, false), grpcMessage(3000, false)...)
	c.data(3, two, 7, true, false) // padded, 7-byte frames: prefixes split across frames
	c.headers(5, true, false)      // no message
	c.data(3, grpcMessage(0, false), 2, false, true)
	c.headers(7, false, false)
	c.data(7, grpcMessage(20, true), 100, false, true) // compressed
	_ = c.fr.WriteRSTStream(7, http2.ErrCodeCancel)
	g := &grpcBudget{b: newMemBudget(1 << 40), maxMsg: 1 << 20}
	for seed := range uint64(20) {
		calls := feedScan(t, c.buf.Bytes(), g, seed)
		want := map[uint32][]int64{1: {300}, 3: {30, 9000, 0}, 5: nil, 7: {20 + 2<<20}}
		for id, costs := range want {
			call := calls[id]
			if call == nil {
				t.Fatalf("seed %d: stream %d was never bound", seed, id)
			}
			var got []int64
			for _, m := range call.hold.messages {
				got = append(got, m.cost)
			}
			if len(got) != len(costs) || !call.hold.ended {
				t.Fatalf("seed %d: stream %d reserved %v (ended %v); want %v, ended", seed, id, got, call.hold.ended, costs)
			}
			for i := range got {
				if got[i] != costs[i] {
					t.Errorf("seed %d: stream %d message %d reserved %d; want %d", seed, id, i, got[i], costs[i])
				}
			}
			call.hold.close()
		}
		if g.b.Held() != 0 {
			t.Fatalf("seed %d: %d bytes held after every call closed", seed, g.b.Held())
		}
	}
}

// TestFrameScanRefusesPastTheBudget: a message that does not fit is
// refused, the next one that does is reserved, and one over the message
// limit is left to the server (no reservation, no message: it refuses it).
func TestFrameScanRefusesPastTheBudget(t *testing.T) {
	c := newClientBytes()
	c.headers(1, false, false)
	c.data(1, grpcMessage(400, false), 16384, false, true) // 1200 > 1000
	c.headers(3, false, false)
	c.data(3, grpcMessage(300, false), 16384, false, true) // 900 fits
	c.headers(5, false, false)
	c.data(5, grpcMessage(2000, false), 16384, false, true) // over maxMsg
	g := &grpcBudget{b: newMemBudget(1000), maxMsg: 1024}
	calls := feedScan(t, c.buf.Bytes(), g, 1)
	ctx := context.Background()
	if err := calls[1].hold.awaitMessage(ctx); err == nil || !bytes.Contains([]byte(err.Error()), []byte("more than the whole memory budget")) {
		t.Errorf("a 1200-byte message under a 1000-byte budget: %v", err)
	}
	if err := calls[3].hold.awaitMessage(ctx); err != nil {
		t.Errorf("a 900-byte message under a 1000-byte budget: %v", err)
	}
	if err := calls[5].hold.awaitMessage(ctx); err != nil || len(calls[5].hold.messages) != 0 {
		t.Errorf("a message over the limit: %v, %d reserved; want it left to the server", err, len(calls[5].hold.messages))
	}
	if g.b.Held() != 900 {
		t.Errorf("held %d; want 900", g.b.Held())
	}
}

// TestFrameScanSweepsEndedCalls: calls whose handler never closed their
// hold (the server refused them before it ran) are closed once their
// context is done, by the sweep a growing number of calls triggers, or
// when the connection fails.
func TestFrameScanSweepsEndedCalls(t *testing.T) {
	g := &grpcBudget{b: newMemBudget(1 << 30), maxMsg: 1 << 20}
	s := newFrameScan(g)
	var ended []*budgetedCall
	for i := range 3 * minSweep {
		ctx, cancel := context.WithCancel(context.Background())
		c := &budgetedCall{}
		c.hold.b = g.b
		c.framing = msgFraming{hold: &c.hold, ctx: ctx}
		s.lastHeaders = uint32(2*i + 1)
		s.bind(&c.framing)
		c.hold.pushMessage(10, 10)
		if i%2 == 0 {
			cancel() // ended, its handler never ran
			ended = append(ended, c)
		} else {
			defer cancel()
		}
	}
	swept := 0
	for _, c := range ended {
		if c.hold.isClosed() {
			swept++
		}
	}
	if swept == 0 || len(s.calls) >= 3*minSweep {
		t.Errorf("after %d calls, %d ended ones swept, %d followed", 3*minSweep, swept, len(s.calls))
	}
	s.closeAll()
	if g.b.Held() != 0 || len(s.calls) != 0 {
		t.Errorf("after the connection failed: %d bytes held, %d calls followed", g.b.Held(), len(s.calls))
	}
}
