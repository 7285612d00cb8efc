package stats

import (
	"errors"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/driver"
	"github.com/tritontop/tritontop/triton"
	"github.com/tritontop/tritontop/triton/kserve"
)

// codeSlots is one slot per gRPC code (0..16) plus one shared by any code
// beyond them, so that counting errors by code needs no map on the hot path.
const codeSlots = int(codes.Unauthenticated) + 2

// otherSlot is the slot of codes beyond codes.Unauthenticated.
const otherSlot = codeSlots - 1

// tally is the counters of one span of results: a tick, a window slot or the
// whole run. It is a plain value so that merging spans is addition.
type tally struct {
	requests   int64
	successes  int64
	errors     int64
	inferences int64
	cancelled  int64
	retries    int64
	late       int64
	bytesSent  int64
	bytesRecv  int64
	// timed counts the successes whose client phases were timed, and
	// send and recv add those phases up, in ns.
	timed, send, recv int64
	// openLoop is set when the span had open-loop results (a schedule that
	// differs from the send) or ran in rate mode.
	openLoop bool
	latency  extremes
	sched    extremes
	errCount [codeSlots]int64
	// stream counts a decoupled model's responses.
	stream streamTally
	// seq is the latency of a stateful model's sequences that ended.
	seq extremes
}

// merge adds o's counters to t.
func (t *tally) merge(o *tally) {
	t.requests += o.requests
	t.successes += o.successes
	t.errors += o.errors
	t.inferences += o.inferences
	t.cancelled += o.cancelled
	t.retries += o.retries
	t.late += o.late
	t.bytesSent += o.bytesSent
	t.bytesRecv += o.bytesRecv
	t.timed += o.timed
	t.send += o.send
	t.recv += o.recv
	t.openLoop = t.openLoop || o.openLoop
	t.latency.merge(o.latency)
	t.sched.merge(o.sched)
	t.stream.merge(&o.stream)
	t.seq.merge(o.seq)
	for i, c := range o.errCount {
		t.errCount[i] += c
	}
}

// errorMessages holds the latest message per code slot over the run, and the
// code that the shared slot last saw. One set serves every span: a span always
// ends at the current tick, so the latest message of a code the span counted
// is the run's latest message of that code.
type errorMessages struct {
	msg       [codeSlots]string
	otherCode codes.Code
}

// errorSamples keeps the latest error value per code slot between ticks.
// Storing an interface value does not allocate; its message is read once per
// tick instead of once per result.
type errorSamples struct {
	err       [codeSlots]error
	otherCode codes.Code
}

// record notes err as the latest error of code and returns its slot.
func (s *errorSamples) record(code codes.Code, err error) int {
	slot := int(code)
	if slot >= otherSlot {
		slot = otherSlot
		s.otherCode = code
	}
	if err != nil {
		s.err[slot] = err
	}
	return slot
}

// drain moves the latest messages into m, copying a message only when it
// differs from the one m holds, and forgets the error values.
func (s *errorSamples) drain(m *errorMessages) {
	for i, err := range s.err {
		if err == nil {
			continue
		}
		msg := errorMessage(err)
		if msg != m.msg[i] {
			m.msg[i] = msg
		}
		s.err[i] = nil
	}
	m.otherCode = s.otherCode
}

// errorMessage is the server's message without the code prefix that
// triton.Error's Error adds, since ErrorCount carries the code separately.
func errorMessage(err error) string {
	var te *triton.Error
	if errors.As(err, &te) {
		return te.Message
	}
	return err.Error()
}

// addResult counts one result and reports whether it succeeded; the caller
// records a success's latencies. It is the aggregator's per-result path: no
// allocation, no lock.
func (t *tally) addResult(r *driver.Result, samples *errorSamples) bool {
	t.retries += int64(r.Retries)
	t.bytesSent += int64(r.BytesSent)
	t.bytesRecv += int64(r.BytesReceived)
	if r.Scheduled != r.Sent {
		t.openLoop = true
	}
	if r.Decoupled {
		t.stream.seen = true
	}
	if r.Cancelled {
		t.cancelled++
		return false
	}
	t.requests++
	if r.Late {
		t.late++
	}
	if r.Code == codes.OK && r.Err == nil {
		t.successes++
		t.inferences += int64(max(r.Inferences, 1))
		if r.ClientSend > 0 || r.ClientRecv > 0 {
			t.timed++
			t.send += int64(r.ClientSend)
			t.recv += int64(r.ClientRecv)
		}
		return true
	}
	t.errors++
	code := r.Code
	if code == codes.OK {
		// An error without a code is the transport's; Triton never sends OK
		// with an error.
		code = codes.Unknown
	}
	t.errCount[samples.record(code, r.Err)]++
	return false
}

// clientStats turns a span's counters into ClientStats over duration d.
func (t *tally) clientStats(d time.Duration, msgs *errorMessages) ClientStats {
	s := ClientStats{
		Duration:      d,
		Requests:      t.requests,
		Successes:     t.successes,
		Errors:        t.errors,
		Inferences:    t.inferences,
		Cancelled:     t.cancelled,
		Retries:       t.retries,
		Late:          t.late,
		BytesSent:     t.bytesSent,
		BytesReceived: t.bytesRecv,
		Timed:         t.timed,
		SendTotal:     time.Duration(t.send),
		RecvTotal:     time.Duration(t.recv),
	}
	s.SetRates()
	if t.errors > 0 {
		s.ErrorsByCode = t.errorsByCode(msgs)
	}
	return s
}

// errorsByCode lists the span's errors, most frequent first.
func (t *tally) errorsByCode(msgs *errorMessages) []ErrorCount {
	var out []ErrorCount
	for i, c := range t.errCount {
		if c == 0 {
			continue
		}
		code := codes.Code(i)
		if i == otherSlot {
			code = msgs.otherCode
		}
		out = append(out, ErrorCount{Code: kserve.CodeName(code), Count: c, Message: msgs.msg[i]})
	}
	sortErrors(out)
	return out
}
