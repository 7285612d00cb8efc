package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// settingsStore keeps the trace and log settings a client may read and
// change. The simulator neither traces nor logs requests; it only remembers
// what it was told, as tools that toggle these settings expect.
type settingsStore struct {
	mu    sync.Mutex
	trace map[string][]string
	log   logSettings
}

// defaultTrace is Triton's trace configuration when started without
// --trace-config.
func defaultTrace() map[string][]string {
	return map[string][]string{
		"trace_file":    {""},
		"trace_level":   {"OFF"},
		"trace_rate":    {"1000"},
		"trace_count":   {"-1"},
		"log_frequency": {"0"},
		"trace_mode":    {"triton"},
	}
}

func (s *settingsStore) init() {
	if s.trace == nil {
		s.trace = defaultTrace()
		s.log = defaultLog()
	}
}

// updateTrace applies the given settings (an empty value list restores the
// default) and returns the result.
func (s *settingsStore) updateTrace(upd map[string][]string) (map[string][]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	def := defaultTrace()
	for _, k := range slices.Sorted(maps.Keys(upd)) {
		if _, ok := def[k]; !ok {
			return nil, &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("unknown trace setting '%s'", textsafe.Bound(k))}
		}
	}
	for k, v := range upd {
		if len(v) == 0 {
			s.trace[k] = def[k]
		} else {
			s.trace[k] = slices.Clone(v)
		}
	}
	return maps.Clone(s.trace), nil
}

// TraceSetting implements GRPCInferenceServiceServer.
func (g *grpcService) TraceSetting(_ context.Context, req *pb.TraceSettingRequest) (*pb.TraceSettingResponse, error) {
	if m := req.GetModelName(); m != "" {
		if _, err := g.engine.ModelConfig(m, ""); err != nil {
			return nil, grpcError(err)
		}
	}
	upd := make(map[string][]string, len(req.GetSettings()))
	for k, v := range req.GetSettings() {
		upd[k] = v.GetValue()
	}
	cur, err := g.settings.updateTrace(upd)
	if err != nil {
		return nil, grpcError(err)
	}
	resp := &pb.TraceSettingResponse{Settings: make(map[string]*pb.TraceSettingResponse_SettingValue, len(cur))}
	for k, v := range cur {
		resp.Settings[k] = &pb.TraceSettingResponse_SettingValue{Value: v}
	}
	return resp, nil
}

// System shared memory is served by the engine (shm.go); the simulator has
// no GPU, so CUDA regions are refused as Triton built without GPU support
// refuses them: nothing is ever registered, a named status is NOT_FOUND and
// unregister is a no-op.

func shmNotFound(kind, name string) error {
	return &kserve.Error{Code: codes.NotFound, Message: fmt.Sprintf("Unable to find %s shared memory region: '%s'", kind, textsafe.Bound(name))}
}

func cudaShmRegisterError(name string) error {
	return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("failed to register CUDA shared memory region: '%s', GPUs not supported", textsafe.Bound(name))}
}

// SystemSharedMemoryStatus implements GRPCInferenceServiceServer.
func (g *grpcService) SystemSharedMemoryStatus(_ context.Context, req *pb.SystemSharedMemoryStatusRequest) (*pb.SystemSharedMemoryStatusResponse, error) {
	regions, err := g.engine.SystemSharedMemoryStatus(req.GetName())
	if err != nil {
		return nil, grpcError(err)
	}
	out := &pb.SystemSharedMemoryStatusResponse{Regions: make(map[string]*pb.SystemSharedMemoryStatusResponse_RegionStatus, len(regions))}
	for _, r := range regions {
		out.Regions[r.Name] = &pb.SystemSharedMemoryStatusResponse_RegionStatus{Name: r.Name, Key: r.Key, Offset: r.Offset, ByteSize: r.ByteSize}
	}
	return out, nil
}

// SystemSharedMemoryRegister implements GRPCInferenceServiceServer.
func (g *grpcService) SystemSharedMemoryRegister(_ context.Context, req *pb.SystemSharedMemoryRegisterRequest) (*pb.SystemSharedMemoryRegisterResponse, error) {
	if err := g.engine.clientShm(); err != nil {
		return nil, grpcError(err)
	}
	if err := g.engine.RegisterSystemSharedMemory(req.GetName(), req.GetKey(), req.GetOffset(), req.GetByteSize()); err != nil {
		return nil, grpcError(err)
	}
	return &pb.SystemSharedMemoryRegisterResponse{}, nil
}

// SystemSharedMemoryUnregister implements GRPCInferenceServiceServer.
func (g *grpcService) SystemSharedMemoryUnregister(_ context.Context, req *pb.SystemSharedMemoryUnregisterRequest) (*pb.SystemSharedMemoryUnregisterResponse, error) {
	if err := g.engine.clientShm(); err != nil {
		return nil, grpcError(err)
	}
	if err := g.engine.UnregisterSystemSharedMemory(req.GetName()); err != nil {
		return nil, grpcError(err)
	}
	return &pb.SystemSharedMemoryUnregisterResponse{}, nil
}

// CudaSharedMemoryStatus implements GRPCInferenceServiceServer.
func (g *grpcService) CudaSharedMemoryStatus(_ context.Context, req *pb.CudaSharedMemoryStatusRequest) (*pb.CudaSharedMemoryStatusResponse, error) {
	if req.GetName() != "" {
		return nil, grpcError(shmNotFound("cuda", req.GetName()))
	}
	return &pb.CudaSharedMemoryStatusResponse{Regions: map[string]*pb.CudaSharedMemoryStatusResponse_RegionStatus{}}, nil
}

// CudaSharedMemoryRegister implements GRPCInferenceServiceServer. Triton
// built without GPU support refuses it before it asks --allow-client-shm.
func (g *grpcService) CudaSharedMemoryRegister(_ context.Context, req *pb.CudaSharedMemoryRegisterRequest) (*pb.CudaSharedMemoryRegisterResponse, error) {
	return nil, grpcError(cudaShmRegisterError(req.GetName()))
}

// CudaSharedMemoryUnregister implements GRPCInferenceServiceServer.
func (g *grpcService) CudaSharedMemoryUnregister(context.Context, *pb.CudaSharedMemoryUnregisterRequest) (*pb.CudaSharedMemoryUnregisterResponse, error) {
	if err := g.engine.clientShm(); err != nil {
		return nil, grpcError(err)
	}
	return &pb.CudaSharedMemoryUnregisterResponse{}, nil
}
