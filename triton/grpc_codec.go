package triton

import (
	"fmt"
	"time"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	// Registers the "proto" codec that rawCodec falls back to.
	_ "google.golang.org/grpc/encoding/proto"
)

// rawCodec carries already-encoded ModelInferRequest bytes out and counts
// (or minimally parses) response bytes in, so the driver's hot path does no
// protobuf marshalling or unmarshalling. Its name is "proto" so the wire
// content-type stays application/grpc+proto; messages it does not know go
// to the standard proto codec.
type rawCodec struct {
	fallback encoding.CodecV2
}

func newRawCodec() rawCodec {
	return rawCodec{fallback: encoding.GetCodecV2("proto")}
}

// Name implements encoding.CodecV2.
func (rawCodec) Name() string { return "proto" }

// Marshal implements encoding.CodecV2. Prepared bytes are handed over
// as-is: mem.SliceBuffer's Free is a no-op, so gRPC never recycles them.
func (c rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	switch m := v.(type) {
	case *grpcPrepared:
		return m.wire, nil
	case *timedCall:
		m.ph.mark(&m.ph.sentAt)
		return m.p.wire, nil
	case *streamRequest:
		// A sequence's request is two buffers (see PrepareSequence).
		if len(m.p.wire) == 2 {
			return mem.BufferSlice{m.p.wire[0], m.p.wire[1], mem.SliceBuffer(m.idField)}, nil
		}
		return mem.BufferSlice{m.p.wire[0], mem.SliceBuffer(m.idField)}, nil
	}
	return c.fallback.Marshal(v)
}

// Unmarshal implements encoding.CodecV2.
func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch m := v.(type) {
	case *sizeReply:
		m.size = data.Len()
		if m.ph != nil {
			m.ph.mark(&m.ph.arriveAt)
		}
		return nil
	case *streamReply:
		m.arrived = time.Now()
		m.size = data.Len()
		if len(data) == 1 {
			return m.parse(data[0].ReadOnlyData())
		}
		m.scratch = m.scratch[:0]
		for _, b := range data {
			m.scratch = append(m.scratch, b.ReadOnlyData()...)
		}
		return m.parse(m.scratch)
	}
	return c.fallback.Unmarshal(data, v)
}

// sizeReply receives a unary response as its size only.
type sizeReply struct {
	size int
	ph   *Phases // the request's, when it is timed
}

// streamReply receives a ModelStreamInferResponse as the few fields the
// driver needs: the request id, the error message, the size, whether the
// response is its request's last (triton_final_response) and whether it
// carries outputs.
type streamReply struct {
	id      string
	errMsg  string
	size    int
	final   bool
	outputs bool
	scratch []byte
	// arrived is when the message reached the codec, before parsing.
	arrived time.Time
}

// FinalResponseParameter is the response parameter Triton puts on every
// response of ModelStreamInfer: true on a request's last response. A
// response without it is taken as final, as Triton's own clients take it.
const FinalResponseParameter = "triton_final_response"

// EnableEmptyFinalResponseParameter is the request parameter that asks
// Triton to send a decoupled model's final flag even when the model sends
// it without a response, as an empty response (no outputs). Without it
// such a request never shows its end to the client; perf_analyzer sets it
// on every request.
const EnableEmptyFinalResponseParameter = "triton_enable_empty_final_response"

// parse reads ModelStreamInferResponse.error_message (1) and
// infer_response (2) -> ModelInferResponse.id (3), parameters (4, only the
// triton_final_response entry) and whether outputs (5) is present,
// skipping everything else; the last occurrence of a field wins, as in
// protobuf.
func (r *streamReply) parse(b []byte) error {
	r.id, r.errMsg, r.final, r.outputs = "", "", true, false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("stream response: %w", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("stream response error_message: %w", protowire.ParseError(n))
			}
			r.errMsg = string(v)
			b = b[n:]
		case num == 2 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("stream response infer_response: %w", protowire.ParseError(n))
			}
			if err := r.parseInferResponse(v); err != nil {
				return err
			}
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return fmt.Errorf("stream response field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	return nil
}

func (r *streamReply) parseInferResponse(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("stream infer_response: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == 3 || num == 4 || num == 5) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("stream infer_response field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
			switch num {
			case 3:
				r.id = string(v)
			case 4:
				if err := r.parseParameter(v); err != nil {
					return err
				}
			case 5:
				r.outputs = true
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return fmt.Errorf("stream infer_response field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return nil
}

// parseParameter reads one entry of ModelInferResponse.parameters, a map
// entry {key (1), value (2) InferParameter}, and takes the bool_param (1)
// of triton_final_response. Other entries are skipped without allocating.
func (r *streamReply) parseParameter(b []byte) error {
	var key, value []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("stream response parameter: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == 1 || num == 2) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("stream response parameter: %w", protowire.ParseError(n))
			}
			if num == 1 {
				key = v
			} else {
				value = v
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return fmt.Errorf("stream response parameter field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	if string(key) != FinalResponseParameter {
		return nil
	}
	// An InferParameter without bool_param is false, as protobuf reads it.
	final := false
	for len(value) > 0 {
		num, typ, n := protowire.ConsumeTag(value)
		if n < 0 {
			return fmt.Errorf("stream response %s: %w", FinalResponseParameter, protowire.ParseError(n))
		}
		value = value[n:]
		if num == 1 && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(value)
			if n < 0 {
				return fmt.Errorf("stream response %s: %w", FinalResponseParameter, protowire.ParseError(n))
			}
			final = v != 0
			value = value[n:]
			continue
		}
		// Another choice of the oneof replaces bool_param.
		final = false
		n = protowire.ConsumeFieldValue(num, typ, value)
		if n < 0 {
			return fmt.Errorf("stream response %s field %d: %w", FinalResponseParameter, num, protowire.ParseError(n))
		}
		value = value[n:]
	}
	r.final = final
	return nil
}

// appendIDField appends ModelInferRequest.id (field 3) to b. Appended after
// a prepared request it overrides any id in it: for a scalar field the
// last occurrence on the wire wins.
func appendIDField(b []byte, id string) []byte {
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	return protowire.AppendString(b, id)
}
