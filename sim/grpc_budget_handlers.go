package sim

import (
	"context"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// budgetedService is desc with its calls' messages under their holds:
// each handler waits for its message's verdict before reading it (a
// refused message is never read: the call ends with the refusal), and
// decodes it with its decoding reserved (serverCodec). The handlers are
// wrapped once; ModelInfer, the benchmarked path, allocates nothing more
// per call.
func budgetedService(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	d := *desc
	d.Methods = slices.Clone(desc.Methods)
	for i := range d.Methods {
		if desc.ServiceName == pb.GRPCInferenceService_ServiceDesc.ServiceName && d.Methods[i].MethodName == "ModelInfer" {
			d.Methods[i].Handler = modelInferHandler
			continue
		}
		h := d.Methods[i].Handler
		d.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			hold := holdFrom(ctx)
			defer hold.close() // its answer is small
			if err := hold.awaitMessage(ctx); err != nil {
				return nil, grpcError(err)
			}
			return h(srv, ctx, func(m any) error {
				pm, ok := m.(proto.Message)
				if !ok || hold == nil {
					return dec(m)
				}
				return decodeUnder(hold, dec, &budgetedMsg{msg: pm, hold: hold})
			}, in)
		}
	}
	d.Streams = slices.Clone(desc.Streams)
	for i := range d.Streams {
		if desc.ServiceName == pb.GRPCInferenceService_ServiceDesc.ServiceName && d.Streams[i].StreamName == "ModelStreamInfer" {
			continue // it takes each message under the hold itself
		}
		h := d.Streams[i].Handler
		d.Streams[i].Handler = func(srv any, ss grpc.ServerStream) error {
			hold := holdFrom(ss.Context())
			defer hold.close()
			if err := hold.awaitMessage(ss.Context()); err != nil {
				return grpcError(err)
			}
			return h(srv, ss)
		}
	}
	return &d
}

// decodeUnder reads a message that awaitMessage admitted into bm with dec,
// and takes its reservation off the hold's queue: a message whose decoding
// did not fit is left empty by the codec and refused here.
func decodeUnder(hold *budgetHold, dec func(any) error, bm *budgetedMsg) error {
	if err := dec(bm); err != nil {
		return err
	}
	if _, err := hold.popMessage(); err != nil {
		return grpcError(err)
	}
	return nil
}

// inferIn is a ModelInfer request, its budgetedMsg and its answer's
// budgetedResp, allocated together.
type inferIn struct {
	req pb.ModelInferRequest
	msg budgetedMsg
	out budgetedResp
}

// newInferIn is an empty request to decode under hold.
func newInferIn(hold *budgetHold) *inferIn {
	in := &inferIn{}
	in.msg = budgetedMsg{msg: &in.req, hold: hold}
	return in
}

// modelInferHandler is the generated ModelInfer handler with its request
// taken under the call's hold, which stays held until its answer is
// encoded (serverCodec.Marshal closes it). The server has no interceptors.
func modelInferHandler(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	hold := holdFrom(ctx)
	if err := hold.awaitMessage(ctx); err != nil {
		hold.close()
		return nil, grpcError(err)
	}
	in := newInferIn(hold)
	if err := decodeUnder(hold, dec, &in.msg); err != nil {
		hold.close()
		return nil, err
	}
	resp, err := srv.(pb.GRPCInferenceServiceServer).ModelInfer(ctx, &in.req)
	if err != nil || hold == nil {
		hold.close()
		return resp, err
	}
	in.out = budgetedResp{resp: resp, hold: hold}
	return &in.out, nil
}
