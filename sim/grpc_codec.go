package sim

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// largeMessage is the size from which serverCodec keeps large buffers out
// of grpc-go's pool (1 MiB, the pool's largest tier).
const largeMessage = 1 << 20

// serverCodec is grpc-go's protobuf codec with the memory budget in it:
//
//   - a message to decode wrapped in a budgetedMsg has what decoding it
//     allocates (protoCosts) reserved in its call's hold first; if that
//     does not fit, it is left undecoded and its handler answers the
//     refusal;
//   - a large message's contiguous copy (to decode from, or encoded to
//     send) is a buffer of its own rather than one from grpc-go's pool: a
//     pooled buffer of hundreds of megabytes stays held by the pool after
//     its call, outside the budget, until two collections have run.
//
// Small messages take grpc-go's pooled path otherwise unchanged.
type serverCodec struct {
	costs *protoCosts
}

var protoCodec = encoding.GetCodecV2(grpcproto.Name)

// budgetedMsg is a message for serverCodec to decode under hold.
type budgetedMsg struct {
	msg  proto.Message
	hold *budgetHold
}

// budgetedResp is an answer for serverCodec to encode, closing its call's
// hold once it is: a large answer keeps its own bytes reserved until the
// server has written and freed it.
type budgetedResp struct {
	resp *pb.ModelInferResponse
	hold *budgetHold
}

// Name implements encoding.CodecV2.
func (serverCodec) Name() string { return grpcproto.Name }

// Marshal implements encoding.CodecV2.
func (serverCodec) Marshal(v any) (mem.BufferSlice, error) {
	br, budgeted := v.(*budgetedResp)
	if budgeted {
		v = br.resp
	}
	if !largeResponse(v) {
		if budgeted {
			defer br.hold.close()
		}
		return protoCodec.Marshal(v)
	}
	b, err := proto.Marshal(v.(proto.Message))
	if err != nil {
		if budgeted {
			br.hold.close()
		}
		return nil, err
	}
	if !budgeted {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	return mem.BufferSlice{mem.NewBuffer(&b, br.hold.closeKeeping(int64(len(b))))}, nil
}

// largeResponse reports whether v is an infer response whose outputs make
// it a large message; only those are (other answers are small, and
// checking them would cost a walk of every message).
func largeResponse(v any) bool {
	var r *pb.ModelInferResponse
	switch m := v.(type) {
	case *pb.ModelInferResponse:
		r = m
	case *pb.ModelStreamInferResponse:
		r = m.GetInferResponse()
	}
	n := 0
	for _, b := range r.GetRawOutputContents() {
		n += len(b)
	}
	return n >= largeMessage
}

// Unmarshal implements encoding.CodecV2.
func (c serverCodec) Unmarshal(data mem.BufferSlice, v any) error {
	bm, budgeted := v.(*budgetedMsg)
	if !budgeted {
		m, ok := v.(proto.Message)
		if !ok {
			return fmt.Errorf("failed to unmarshal, message is %T, want proto.Message", v)
		}
		bm = &budgetedMsg{msg: m}
	}
	if bm.hold == nil && (len(data) <= 1 || data.Len() < largeMessage) {
		return protoCodec.Unmarshal(data, bm.msg)
	}
	var b []byte
	switch {
	case len(data) == 1:
		b = data[0].ReadOnlyData()
	case data.Len() < largeMessage:
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buf.Free()
		b = buf.ReadOnlyData()
	default:
		b = data.Materialize()
	}
	if bm.hold != nil {
		if err := bm.hold.decoding(c.costs.decodedCost(bm.msg.ProtoReflect().Descriptor(), b)); err != nil {
			// Left empty: its handler answers the refusal (an error here
			// would reach the client as grpc-go's INTERNAL).
			return nil
		}
	}
	return proto.Unmarshal(b, bm.msg)
}
