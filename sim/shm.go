package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// The tensor parameters of Triton's shared-memory extension.
const (
	shmRegionParam   = "shared_memory_region"
	shmOffsetParam   = "shared_memory_offset"
	shmByteSizeParam = "shared_memory_byte_size"
)

// reservedShmPrefix is the key prefix Triton keeps for the regions its
// Python backend creates; a client may not register one.
const reservedShmPrefix = "triton_python_backend_shm_region_"

// SharedMemoryRegion is a registered system shared-memory region, as
// SystemSharedMemoryStatus reports it.
type SharedMemoryRegion struct {
	Name, Key        string
	Offset, ByteSize uint64
}

// shmRegion is a registered region: its mapping of the POSIX shared-memory
// object, from the registered offset, of the registered size.
type shmRegion struct {
	SharedMemoryRegion
	mem   []byte // the whole mapping; data is mem's registered part
	data  []byte
	unmap func() error
}

// shmRegistry holds the system shared-memory regions clients registered,
// as Triton's SharedMemoryManager does. Requests copy their inputs out of a
// region when they are submitted and their outputs into it when they
// complete, under mu, so that an unregister never unmaps a region while a
// copy reads or writes it.
type shmRegistry struct {
	mu      sync.Mutex
	regions map[string]*shmRegion
}

// RegisterSystemSharedMemory registers the POSIX shared-memory object key
// (as shm_open names it, "/name") under name: byteSize bytes from offset.
// The errors are Triton's.
func (e *Engine) RegisterSystemSharedMemory(name, key string, offset, byteSize uint64) error {
	trimmed := strings.TrimLeft(key, "/")
	if trimmed == "" {
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("cannot register shared memory region '%s' - invalid shm key '%s'", textsafe.Bound(name), textsafe.Bound(key))}
	}
	if strings.HasPrefix(trimmed, reservedShmPrefix) {
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("cannot register shared memory region '%s' with key '%s' as the key contains the reserved prefix '%s'", textsafe.Bound(name), textsafe.Bound(key), reservedShmPrefix)}
	}
	s := &e.shm
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.regions[name]; ok {
		return &kserve.Error{Code: codes.AlreadyExists, Message: fmt.Sprintf("shared memory region '%s' already in manager", textsafe.Bound(name))}
	}
	mem, unmap, size, err := mapSharedMemory(key, offset, byteSize)
	if err != nil {
		var ke *kserve.Error
		if errors.As(err, &ke) {
			return err
		}
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("failed to register shared memory region '%s': %v", textsafe.Bound(name), err)}
	}
	if offset+byteSize > size || offset+byteSize < offset {
		_ = unmap()
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("failed to register shared memory region '%s': invalid args", textsafe.Bound(name))}
	}
	if s.regions == nil {
		s.regions = map[string]*shmRegion{}
	}
	s.regions[name] = &shmRegion{
		SharedMemoryRegion: SharedMemoryRegion{Name: name, Key: key, Offset: offset, ByteSize: byteSize},
		mem:                mem, data: mem[:byteSize:byteSize], unmap: unmap,
	}
	return nil
}

// SystemSharedMemoryStatus returns the region registered as name, or every
// region (by name) when name is empty.
func (e *Engine) SystemSharedMemoryStatus(name string) ([]SharedMemoryRegion, error) {
	s := &e.shm
	s.mu.Lock()
	defer s.mu.Unlock()
	if name != "" {
		r, ok := s.regions[name]
		if !ok {
			return nil, shmNotFound("system", name)
		}
		return []SharedMemoryRegion{r.SharedMemoryRegion}, nil
	}
	out := make([]SharedMemoryRegion, 0, len(s.regions))
	for _, n := range slices.Sorted(maps.Keys(s.regions)) {
		out = append(out, s.regions[n].SharedMemoryRegion)
	}
	return out, nil
}

// UnregisterSystemSharedMemory unregisters and unmaps the region name, or
// every region when name is empty. A name not registered is no error, as
// in Triton.
func (e *Engine) UnregisterSystemSharedMemory(name string) error {
	s := &e.shm
	s.mu.Lock()
	defer s.mu.Unlock()
	if name != "" {
		r, ok := s.regions[name]
		if !ok {
			return nil
		}
		delete(s.regions, name)
		if err := r.unmap(); err != nil {
			return &kserve.Error{Code: codes.Internal, Message: fmt.Sprintf("unable to munmap shared memory region, errno: %v", err)}
		}
		return nil
	}
	var failed []string
	for _, n := range slices.Sorted(maps.Keys(s.regions)) {
		if err := s.regions[n].unmap(); err != nil {
			failed = append(failed, n)
		}
		delete(s.regions, n)
	}
	if len(failed) > 0 {
		return &kserve.Error{Code: codes.Internal, Message: "Failed to unregister the following system shared memory regions: " + strings.Join(failed, " ,") + " ,"}
	}
	return nil
}

// shmParams reads a tensor's shared-memory parameters with the checks and
// messages of Triton's gRPC frontend (ParseSharedMemoryParams).
func shmParams(tensor string, params map[string]*pb.InferParameter) (region string, offset, size int64, ok bool, err error) {
	rp, ok := params[shmRegionParam]
	if ok {
		sp, isString := rp.GetParameterChoice().(*pb.InferParameter_StringParam)
		if !isString {
			return "", 0, 0, false, invalidArg("invalid value type for 'shared_memory_region' parameter for tensor '%s', expected string_param.", textsafe.Bound(tensor))
		}
		region = sp.StringParam
	}
	for _, p := range []struct {
		key string
		to  *int64
	}{{shmOffsetParam, &offset}, {shmByteSizeParam, &size}} {
		v, has := params[p.key]
		if !has {
			continue
		}
		if !ok {
			return "", 0, 0, false, invalidArg("'%s' can not be specified without 'shared_memory_region' parameter for tensor '%s'", p.key, textsafe.Bound(tensor))
		}
		ip, isInt := v.GetParameterChoice().(*pb.InferParameter_Int64Param)
		if !isInt {
			return "", 0, 0, false, invalidArg("invalid value type for '%s' parameter for tensor '%s', expected int64_param.", p.key, textsafe.Bound(tensor))
		}
		*p.to = ip.Int64Param
	}
	if ok {
		if _, has := params[shmByteSizeParam]; !has {
			return "", 0, 0, false, invalidArg("'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '%s'", textsafe.Bound(tensor))
		}
	}
	return region, offset, size, ok, nil
}

// span is the part of region name that offset and size name, with
// Triton's checks (SharedMemoryManager::GetMemoryInfo). s.mu is held.
func (s *shmRegistry) span(name string, offset, size int64) ([]byte, error) {
	r, ok := s.regions[name]
	if !ok {
		return nil, &kserve.Error{Code: codes.NotFound, Message: fmt.Sprintf("Unable to find shared memory region: '%s'", textsafe.Bound(name))}
	}
	if offset < 0 || uint64(offset) >= r.ByteSize {
		return nil, invalidArg("Invalid offset for shared memory region: '%s'", textsafe.Bound(name))
	}
	if size < 0 || uint64(offset)+uint64(size) > r.ByteSize {
		return nil, invalidArg("Invalid offset + byte size for shared memory region: '%s'", textsafe.Bound(name))
	}
	return r.data[offset : offset+size : offset+size], nil
}

// usesShm reports whether any input or requested output of req is in
// shared memory; it is the only cost of the extension to other requests.
func usesShm(req *pb.ModelInferRequest) bool {
	for _, in := range req.GetInputs() {
		if _, ok := in.GetParameters()[shmRegionParam]; ok {
			return true
		}
		if _, ok := in.GetParameters()[shmByteSizeParam]; ok {
			return true
		}
	}
	for _, o := range req.GetOutputs() {
		if _, ok := o.GetParameters()[shmRegionParam]; ok {
			return true
		}
	}
	return false
}

// shmOutput is a requested output to be written into a region.
type shmOutput struct {
	name         string
	region       string
	offset, size int64
}

// resolveShm returns req with the inputs in shared memory read out of
// their regions into raw_input_contents (in the request's order, as the
// frontends hand raw contents to the core), the shared-memory parameters
// taken off, and the outputs to write into regions when it completes. The
// inputs' copies are reserved in share.
func (e *Engine) resolveShm(req *pb.ModelInferRequest, share *budgetShare) (*pb.ModelInferRequest, []shmOutput, error) {
	out := &pb.ModelInferRequest{
		ModelName: req.GetModelName(), ModelVersion: req.GetModelVersion(), Id: req.GetId(),
		Parameters: req.GetParameters(),
		Inputs:     make([]*pb.ModelInferRequest_InferInputTensor, 0, len(req.GetInputs())),
	}
	raw := req.GetRawInputContents()
	next := 0
	s := &e.shm
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range req.GetInputs() {
		region, offset, size, ok, err := shmParams(in.GetName(), in.GetParameters())
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			out.Inputs = append(out.Inputs, in)
			if in.GetContents() == nil && next < len(raw) {
				out.RawInputContents = append(out.RawInputContents, raw[next])
				next++
			}
			continue
		}
		b, err := s.span(region, offset, size)
		if err != nil {
			return nil, nil, err
		}
		if err := share.grow(int64(len(b))); err != nil {
			return nil, nil, err
		}
		out.Inputs = append(out.Inputs, &pb.ModelInferRequest_InferInputTensor{
			Name: in.GetName(), Datatype: in.GetDatatype(), Shape: in.GetShape(),
			Parameters: withoutShm(in.GetParameters()),
		})
		out.RawInputContents = append(out.RawInputContents, slices.Clone(b))
	}
	out.RawInputContents = append(out.RawInputContents, raw[next:]...)
	var outs []shmOutput
	for _, o := range req.GetOutputs() {
		region, offset, size, ok, err := shmParams(o.GetName(), o.GetParameters())
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			out.Outputs = append(out.Outputs, o)
			continue
		}
		if _, cls := o.GetParameters()["classification"]; cls {
			return nil, nil, invalidArg("Output can't set both 'shared_memory_region' and 'classification'")
		}
		if _, err := s.span(region, offset, size); err != nil {
			return nil, nil, err
		}
		outs = append(outs, shmOutput{name: o.GetName(), region: region, offset: offset, size: size})
		out.Outputs = append(out.Outputs, &pb.ModelInferRequest_InferRequestedOutputTensor{
			Name: o.GetName(), Parameters: withoutShm(o.GetParameters()),
		})
	}
	return out, outs, nil
}

// withoutShm is params without the shared-memory parameters.
func withoutShm(params map[string]*pb.InferParameter) map[string]*pb.InferParameter {
	var out map[string]*pb.InferParameter
	for k, v := range params {
		if k == shmRegionParam || k == shmOffsetParam || k == shmByteSizeParam {
			continue
		}
		if out == nil {
			out = make(map[string]*pb.InferParameter, len(params))
		}
		out[k] = v
	}
	return out
}

// writeShmOutputs copies the outputs in outs from resp into their regions
// and returns the response with their raw_output_contents entries empty,
// as Triton's gRPC frontend sends them, and the shared-memory parameters on
// those outputs; an output larger than its region fails the request with
// Triton's message. resp itself is not changed: its tensors may be shared.
func (e *Engine) writeShmOutputs(resp *pb.ModelInferResponse, outs []shmOutput) (*pb.ModelInferResponse, error) {
	if len(outs) == 0 || resp == nil {
		return resp, nil
	}
	out := &pb.ModelInferResponse{
		ModelName: resp.GetModelName(), ModelVersion: resp.GetModelVersion(), Id: resp.GetId(),
		Parameters:        resp.GetParameters(),
		Outputs:           slices.Clone(resp.GetOutputs()),
		RawOutputContents: slices.Clone(resp.GetRawOutputContents()),
	}
	s := &e.shm
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, so := range outs {
		i := slices.IndexFunc(out.Outputs, func(o *pb.ModelInferResponse_InferOutputTensor) bool { return o.GetName() == so.name })
		if i < 0 || i >= len(out.RawOutputContents) {
			continue
		}
		data := out.RawOutputContents[i]
		if int64(len(data)) > so.size {
			return nil, &kserve.Error{Code: codes.Internal, Message: fmt.Sprintf("shared memory size specified with the request for output '%s' (%d bytes) should be at least %d bytes to hold the results", textsafe.Bound(so.name), so.size, len(data))}
		}
		dst, err := s.span(so.region, so.offset, so.size)
		if err != nil {
			return nil, err
		}
		copy(dst, data)
		out.RawOutputContents[i] = []byte{}
		o := out.Outputs[i]
		params := maps.Clone(o.GetParameters())
		if params == nil {
			params = make(map[string]*pb.InferParameter, 3)
		}
		params[shmRegionParam] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: so.region}}
		params[shmByteSizeParam] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(len(data))}}
		if so.offset != 0 {
			params[shmOffsetParam] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: so.offset}}
		}
		out.Outputs[i] = &pb.ModelInferResponse_InferOutputTensor{Name: o.GetName(), Datatype: o.GetDatatype(), Shape: o.GetShape(), Parameters: params}
	}
	return out, nil
}

// inferShm runs a request with tensors in shared memory: inputs read from
// their regions at submission, outputs written to theirs at completion.
func (e *Engine) inferShm(ctx context.Context, req *pb.ModelInferRequest, streaming bool, hold *budgetHold) (*pb.ModelInferResponse, error) {
	share := budgetShare{hold: hold}
	req, outs, err := e.resolveShm(req, &share)
	if err != nil {
		return nil, err
	}
	r, err := e.submit(req, streaming, nil, nil, share)
	if err != nil {
		return nil, err
	}
	resp, err := e.wait(ctx, r)
	if err != nil {
		return nil, err
	}
	return e.writeShmOutputs(resp, outs)
}

// openShmError is Triton's answer to a key shm_open cannot open.
func openShmError(key string) error {
	return &kserve.Error{Code: codes.Internal, Message: fmt.Sprintf("Unable to open shared memory region: '%s'", textsafe.Bound(key))}
}

// shmCompleted wraps a stream's completion callback: a request's outputs
// in shared memory are written to their regions before it is answered.
func (e *Engine) shmCompleted(outs []shmOutput, next func(*request)) func(*request) {
	if len(outs) == 0 {
		return next
	}
	return func(r *request) {
		if r.err == nil {
			if resp, err := e.writeShmOutputs(r.resp, outs); err != nil {
				r.resp, r.err = nil, err
			} else {
				r.resp = resp
			}
		}
		next(r)
	}
}

// errClientShmDisabled is Triton's answer to a client's shared-memory
// registration or unregistration when it was not started with
// --allow-client-shm=true.
var errClientShmDisabled = &kserve.Error{Code: codes.Unimplemented,
	Message: "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable."}

// clientShm refuses a client's registration or unregistration unless
// EngineOptions.AllowClientShm allows them.
func (e *Engine) clientShm() error {
	if !e.opts.AllowClientShm {
		return errClientShmDisabled
	}
	return nil
}

// withoutShmParams is a response as Triton's gRPC frontend sends it: an
// output written to shared memory carries no parameters (writeShmOutputs
// marks it with its region for HTTP's encoder, which writes no data for
// it). resp is changed only if it has such an output.
func withoutShmParams(resp *pb.ModelInferResponse) *pb.ModelInferResponse {
	for i, o := range resp.GetOutputs() {
		p := o.GetParameters()
		if _, ok := p[shmRegionParam]; !ok {
			continue
		}
		p = maps.Clone(p)
		delete(p, shmRegionParam)
		delete(p, shmOffsetParam)
		delete(p, shmByteSizeParam)
		if len(p) == 0 {
			p = nil
		}
		resp.Outputs[i] = &pb.ModelInferResponse_InferOutputTensor{Name: o.GetName(), Datatype: o.GetDatatype(), Shape: o.GetShape(), Parameters: p}
	}
	return resp
}
