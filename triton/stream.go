package triton

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/pb"
)

// grpcStream is one ModelStreamInfer call. Send and Recv each belong to one
// goroutine, as gRPC requires, so the receive buffers need no lock.
type grpcStream struct {
	ctx   context.Context
	cs    grpc.ClientStream
	reply streamReply
}

// streamRequest is a prepared request plus the encoded id field that
// overrides its id on the wire.
type streamRequest struct {
	p       *grpcPrepared
	idField []byte
}

// OpenStream implements Client.
func (c *grpcClient) OpenStream(ctx context.Context) (Stream, error) {
	cs, err := c.conns[c.pick()].NewStream(c.ctx(ctx), &c.streamDesc, pb.GRPCInferenceService_ModelStreamInfer_FullMethodName, c.rawOpts...)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	return &grpcStream{ctx: ctx, cs: cs}, nil
}

// Send implements Stream. The prepared bytes are written unchanged and the
// id is appended as a second ModelInferRequest.id field, which wins.
func (s *grpcStream) Send(p Prepared, id string) error {
	gp, ok := p.(*grpcPrepared)
	if !ok {
		return errForeignPrepared
	}
	if err := s.cs.SendMsg(&streamRequest{p: gp, idField: appendIDField(nil, id)}); err != nil {
		if errors.Is(err, io.EOF) {
			// The server ended the stream; Recv returns why.
			return err
		}
		return grpcError(s.ctx, err)
	}
	return nil
}

// Recv implements Stream. A response with error_message is one failed
// request; the stream goes on. Triton's error_message carries no status
// code, so the request's Error has Code UNKNOWN.
func (s *grpcStream) Recv() (StreamResponse, error) {
	if err := s.cs.RecvMsg(&s.reply); err != nil {
		if errors.Is(err, io.EOF) {
			return StreamResponse{}, io.EOF
		}
		return StreamResponse{}, grpcError(s.ctx, err)
	}
	resp := StreamResponse{ID: s.reply.id, Size: s.reply.size, Final: s.reply.final, Empty: !s.reply.outputs,
		Arrived: s.reply.arrived}
	if s.reply.errMsg != "" {
		resp.Err = &Error{Code: codes.Unknown, Message: textsafe.Excerpt(s.reply.errMsg, maxErrorMessage)}
	}
	return resp, nil
}

// CloseSend implements Stream.
func (s *grpcStream) CloseSend() error {
	return s.cs.CloseSend()
}
