package triton

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tritontop/tritontop/triton/kserve"
)

// The request parameters that place a request in a sequence of a stateful
// model (one whose config has sequence_batching). Triton's clients send all
// three on every request of a sequence: the correlation id as int64_param
// (or string_param for a string id), the two flags as bool_param.
const (
	SequenceIDParameter    = "sequence_id"
	SequenceStartParameter = "sequence_start"
	SequenceEndParameter   = "sequence_end"
)

// Sequence is a prepared request made into the requests of one sequence:
// the same tensors with the sequence parameters of one correlation id.
// Every variant is encoded once, when the sequence is prepared, and never
// changes, so a Sequence may be used from several goroutines.
type Sequence interface {
	// Request returns the request to send at a place in the sequence:
	// start marks its first request (sequence_start), end its last
	// (sequence_end); a sequence of one request has both.
	Request(start, end bool) Prepared
}

// variant indexes a sequence's four requests by their flags.
func variant(start, end bool) int {
	i := 0
	if start {
		i = 1
	}
	if end {
		i |= 2
	}
	return i
}

// appendSequenceEntries appends the sequence parameters as entries of
// ModelInferRequest.parameters (field 4, a map of string to
// InferParameter). A map field's entries may come anywhere in a message
// and the last entry of a key wins, so appended after a prepared request
// they add to its parameters without decoding or re-encoding it.
func appendSequenceEntries(b []byte, id uint64, start, end bool) []byte {
	var param [16]byte
	v := protowire.AppendTag(param[:0], 2, protowire.VarintType) // int64_param
	v = protowire.AppendVarint(v, id)
	b = appendParameterEntry(b, SequenceIDParameter, v)
	b = appendParameterEntry(b, SequenceStartParameter, appendBoolParam(param[:0], start))
	return appendParameterEntry(b, SequenceEndParameter, appendBoolParam(param[:0], end))
}

// appendBoolParam encodes InferParameter{bool_param}. A false flag is
// written out too: a oneof member that is set is always on the wire, as
// Triton's clients send it.
func appendBoolParam(b []byte, v bool) []byte {
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeBool(v))
}

// appendParameterEntry appends one parameters map entry {key (1), value (2)}.
func appendParameterEntry(b []byte, key string, value []byte) []byte {
	entry := protowire.SizeTag(1) + protowire.SizeBytes(len(key)) + protowire.SizeTag(2) + protowire.SizeBytes(len(value))
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(entry))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, key)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendBytes(b, value)
}

// grpcSequence holds a sequence's four requests in one allocation; each
// sends the prepared request's bytes followed by its own parameter entries.
type grpcSequence struct {
	reqs [4]grpcPrepared
	bufs [8]mem.Buffer
}

// Request implements Sequence.
func (s *grpcSequence) Request(start, end bool) Prepared { return &s.reqs[variant(start, end)] }

// PrepareSequence implements Client.
func (c *grpcClient) PrepareSequence(p Prepared, id uint64) (Sequence, error) {
	gp, ok := p.(*grpcPrepared)
	if !ok {
		return nil, errForeignPrepared
	}
	if err := checkSequenceID(id); err != nil {
		return nil, err
	}
	if len(gp.wire) != 1 {
		return nil, errors.New("prepare sequence: the request is already part of a sequence")
	}
	s := &grpcSequence{}
	// One buffer for the four sets of entries: they differ only in the
	// flags.
	buf := make([]byte, 0, 4*64)
	for i := range s.reqs {
		from := len(buf)
		buf = appendSequenceEntries(buf, id, i&1 != 0, i&2 != 0)
		entries := buf[from:len(buf):len(buf)]
		s.bufs[2*i], s.bufs[2*i+1] = gp.wire[0], mem.SliceBuffer(entries)
		s.reqs[i] = grpcPrepared{wire: s.bufs[2*i : 2*i+2 : 2*i+2], size: gp.size + len(entries)}
	}
	return s, nil
}

// checkSequenceID refuses what Triton would: 0 names no sequence, and the
// id travels as an int64.
func checkSequenceID(id uint64) error {
	switch {
	case id == 0:
		return errors.New("prepare sequence: correlation id 0 names no sequence: ids start at 1")
	case id > 1<<63-1:
		return fmt.Errorf("prepare sequence: correlation id %d does not fit Triton's int64 sequence_id", id)
	}
	return nil
}

// httpSequence holds a sequence's four requests. Their bodies share the
// prepared request's bytes: only the JSON part up to the inserted
// parameters is new.
type httpSequence struct {
	reqs [4]httpPrepared
}

// Request implements Sequence.
func (s *httpSequence) Request(start, end bool) Prepared { return &s.reqs[variant(start, end)] }

// PrepareSequence implements Client. The sequence parameters go first in
// the request's "parameters" object, as Triton's HTTP client puts them
// there: {"sequence_id":ID,"sequence_start":B,"sequence_end":B}.
func (c *httpClient) PrepareSequence(p Prepared, id uint64) (Sequence, error) {
	hp, ok := p.(*httpPrepared)
	if !ok {
		return nil, errForeignPrepared
	}
	if err := checkSequenceID(id); err != nil {
		return nil, err
	}
	if hp.paramsAt < 0 || hp.rest != nil {
		return nil, errors.New("prepare sequence: the request's JSON has no place for parameters")
	}
	s := &httpSequence{}
	// The four heads in one buffer: the JSON up to the parameters, then
	// the sequence's own.
	const insMax = 128
	buf := make([]byte, 0, 4*(hp.paramsAt+insMax))
	rest := hp.body[hp.paramsAt:]
	for i := range s.reqs {
		from := len(buf)
		buf = append(buf, hp.body[:hp.paramsAt]...)
		buf = appendSequenceJSON(buf, id, i&1 != 0, i&2 != 0, hp.hasParams)
		head := buf[from:len(buf):len(buf)]
		h := hp.header
		if hp.jsonLen >= 0 {
			h = hp.seqHeader(len(head) - hp.paramsAt)
		}
		s.reqs[i] = httpPrepared{url: hp.url, body: head, rest: rest, header: h, jsonLen: -1, paramsAt: -1,
			getBody: func() (io.ReadCloser, error) { return &bodyParts{a: head, b: rest}, nil }}
	}
	return s, nil
}

// seqHeader returns the headers of the prepared request's sequence
// requests whose sequence parameters take n bytes: the binary tensor data
// extension counts the JSON part. They are made once for each n, a
// handful of lengths, and shared by every sequence.
func (p *httpPrepared) seqHeader(n int) http.Header {
	p.seqMu.Lock()
	defer p.seqMu.Unlock()
	if h := p.seqHeaders[n]; h != nil {
		return h
	}
	if p.seqHeaders == nil {
		p.seqHeaders = map[int]http.Header{}
	}
	h := p.header.Clone()
	h.Set(kserve.HeaderContentLength, strconv.Itoa(p.jsonLen+n))
	p.seqHeaders[n] = h
	return h
}

// appendSequenceJSON appends the sequence parameters as members of a JSON
// object, followed by a comma when other members follow (more), or, for
// a request without parameters, as a whole "parameters" member.
func appendSequenceJSON(b []byte, id uint64, start, end, more bool) []byte {
	if !more {
		b = append(b, `"parameters":{`...)
	}
	b = append(b, `"`+SequenceIDParameter+`":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"`+SequenceStartParameter+`":`...)
	b = strconv.AppendBool(b, start)
	b = append(b, `,"`+SequenceEndParameter+`":`...)
	b = strconv.AppendBool(b, end)
	if more {
		return append(b, ',')
	}
	return append(b, "},"...)
}

// parametersAt finds where sequence parameters go in an infer request's
// JSON part, as json.Marshal writes kserve.InferRequest: its fields in
// order, "id" first when set, then "parameters", then "inputs". It returns
// the offset just inside the "parameters" object, or, when there is none,
// the offset where one goes; -1 if the JSON is not laid out that way.
func parametersAt(head []byte, id string, hasParams bool) int {
	at := len(`{`)
	if id != "" {
		idJSON, err := json.Marshal(id)
		if err != nil {
			return -1
		}
		prefix := append(append([]byte(`{"id":`), idJSON...), ',')
		if !bytes.HasPrefix(head, prefix) {
			return -1
		}
		at = len(prefix)
	}
	if !hasParams {
		if !bytes.HasPrefix(head[min(at, len(head)):], []byte(`"inputs":`)) {
			return -1
		}
		return at
	}
	const open = `"parameters":{`
	if !bytes.HasPrefix(head[min(at, len(head)):], []byte(open)) {
		return -1
	}
	return at + len(open)
}

// bodyParts is a request body in two parts, read in turn: the part of a
// sequence's request that is its own and the part it shares.
type bodyParts struct {
	a, b []byte
}

// Read implements io.Reader.
func (r *bodyParts) Read(p []byte) (int, error) {
	if len(r.a) == 0 && len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.a)
	r.a = r.a[n:]
	m := copy(p[n:], r.b)
	r.b = r.b[m:]
	return n + m, nil
}

// Close implements io.Closer.
func (r *bodyParts) Close() error { return nil }
