package sim

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// grpcService is Triton's inference.GRPCInferenceService in front of an
// Engine. Model RPCs answer what the engine says; shared memory, trace and
// log settings answer as a Triton with nothing registered would.
type grpcService struct {
	pb.UnimplementedGRPCInferenceServiceServer
	engine   *Engine
	settings *settingsStore
}

// grpcError turns an engine error into the gRPC status Triton sends.
func grpcError(err error) error {
	if err == nil {
		return nil
	}
	var te *kserve.Error
	if errors.As(err, &te) {
		return status.Error(te.Code, te.Message)
	}
	if errors.Is(err, context.Canceled) {
		return status.Error(codes.Canceled, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

// ServerLive implements GRPCInferenceServiceServer.
func (g *grpcService) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: g.engine.Live()}, nil
}

// ServerReady implements GRPCInferenceServiceServer.
func (g *grpcService) ServerReady(context.Context, *pb.ServerReadyRequest) (*pb.ServerReadyResponse, error) {
	return &pb.ServerReadyResponse{Ready: g.engine.Ready()}, nil
}

// ModelReady implements GRPCInferenceServiceServer.
func (g *grpcService) ModelReady(_ context.Context, req *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	ready, err := g.engine.ModelReady(req.GetName(), req.GetVersion())
	if err != nil {
		return nil, grpcError(err)
	}
	return &pb.ModelReadyResponse{Ready: ready}, nil
}

// ServerMetadata implements GRPCInferenceServiceServer.
func (g *grpcService) ServerMetadata(context.Context, *pb.ServerMetadataRequest) (*pb.ServerMetadataResponse, error) {
	return g.engine.ServerMetadata(), nil
}

// ModelMetadata implements GRPCInferenceServiceServer.
func (g *grpcService) ModelMetadata(_ context.Context, req *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	md, err := g.engine.ModelMetadata(req.GetName(), req.GetVersion())
	return md, grpcError(err)
}

// ModelConfig implements GRPCInferenceServiceServer.
func (g *grpcService) ModelConfig(_ context.Context, req *pb.ModelConfigRequest) (*pb.ModelConfigResponse, error) {
	cfg, err := g.engine.ModelConfig(req.GetName(), req.GetVersion())
	if err != nil {
		return nil, grpcError(err)
	}
	return &pb.ModelConfigResponse{Config: cfg}, nil
}

// ModelStatistics implements GRPCInferenceServiceServer.
func (g *grpcService) ModelStatistics(_ context.Context, req *pb.ModelStatisticsRequest) (*pb.ModelStatisticsResponse, error) {
	st, err := g.engine.ModelStatistics(req.GetName(), req.GetVersion())
	return st, grpcError(err)
}

// RepositoryIndex implements GRPCInferenceServiceServer.
// gRPC refuses a named repository, as for load and unload (HTTP's index
// ignores the name).
func (g *grpcService) RepositoryIndex(_ context.Context, req *pb.RepositoryIndexRequest) (*pb.RepositoryIndexResponse, error) {
	if req.GetRepositoryName() != "" {
		return nil, grpcError(errRepositoryName)
	}
	return &pb.RepositoryIndexResponse{Models: g.engine.RepositoryIndex(req.GetReady())}, nil
}

// RepositoryModelLoad implements GRPCInferenceServiceServer.
func (g *grpcService) RepositoryModelLoad(_ context.Context, req *pb.RepositoryModelLoadRequest) (*pb.RepositoryModelLoadResponse, error) {
	lr, err := grpcLoadRequest(req)
	if err != nil {
		return nil, grpcError(err)
	}
	if err := g.engine.loadRequested(req.GetModelName(), lr); err != nil {
		return nil, grpcError(err)
	}
	return &pb.RepositoryModelLoadResponse{}, nil
}

// RepositoryModelUnload implements GRPCInferenceServiceServer.
func (g *grpcService) RepositoryModelUnload(_ context.Context, req *pb.RepositoryModelUnloadRequest) (*pb.RepositoryModelUnloadResponse, error) {
	if req.GetRepositoryName() != "" {
		return nil, grpcError(errRepositoryName)
	}
	dependents, err := grpcUnloadDependents(req)
	if err != nil {
		return nil, grpcError(err)
	}
	unload := g.engine.UnloadModel
	if dependents {
		unload = g.engine.UnloadModelAndDependents
	}
	if err := unload(req.GetModelName()); err != nil {
		return nil, grpcError(err)
	}
	return &pb.RepositoryModelUnloadResponse{}, nil
}

// ModelInfer implements GRPCInferenceServiceServer. It is the benchmarked
// path: the request goes straight to the engine and its response straight
// back.
func (g *grpcService) ModelInfer(ctx context.Context, req *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	resp, err := g.engine.infer(ctx, req, false, holdFrom(ctx))
	if err != nil {
		return nil, grpcError(err)
	}
	return withoutShmParams(resp), nil
}

// finalResponse and notFinalResponse are the triton_final_response
// parameter every streamed response carries: true on a request's last
// response, false on a decoupled model's others. They are never mutated.
var (
	finalResponse    = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}
	notFinalResponse = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: false}}
)

// streamError is Triton's in-stream answer to a failed request: the error
// text and a response that only names the request.
func streamError(req *pb.ModelInferRequest, err error) *pb.ModelStreamInferResponse {
	return streamErrorResponse(req, err, finalResponse)
}

// streamRefused is Triton's in-stream answer to a request refused before
// it was queued: the error text beside a cleared response.
func streamRefused(err error) *pb.ModelStreamInferResponse {
	return &pb.ModelStreamInferResponse{ErrorMessage: errorText(err), InferResponse: &pb.ModelInferResponse{}}
}

// errorText is a Triton error's message, or err's text.
func errorText(err error) string {
	var te *kserve.Error
	if errors.As(err, &te) {
		return te.Message
	}
	return err.Error()
}

// streamErrorResponse is an error in a stream: a request's final one, or
// one of a decoupled model's responses before its final one.
func streamErrorResponse(req *pb.ModelInferRequest, err error, final *pb.InferParameter) *pb.ModelStreamInferResponse {
	return &pb.ModelStreamInferResponse{
		ErrorMessage: errorText(err),
		InferResponse: &pb.ModelInferResponse{
			Id:           req.GetId(),
			ModelName:    req.GetModelName(),
			ModelVersion: req.GetModelVersion(),
			Parameters:   map[string]*pb.InferParameter{"triton_final_response": final},
		},
	}
}

// healthService answers grpc.health.v1 Check from server readiness, as
// Triton does; it ignores the service name.
type healthService struct {
	grpc_health_v1.UnimplementedHealthServer
	engine *Engine
}

// Check implements grpc_health_v1.HealthServer.
func (h *healthService) Check(context.Context, *grpc_health_v1.HealthCheckRequest) (*grpc_health_v1.HealthCheckResponse, error) {
	st := grpc_health_v1.HealthCheckResponse_NOT_SERVING
	if h.engine.Ready() {
		st = grpc_health_v1.HealthCheckResponse_SERVING
	}
	return &grpc_health_v1.HealthCheckResponse{Status: st}, nil
}
