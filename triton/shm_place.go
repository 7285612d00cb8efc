package triton

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// SharedMemorySet is the regions a run's requests use: each request's
// inputs written once into a region of their own, each output into a
// region shared by all requests (as perf_analyzer does: the run reads no
// output), all registered with one server.
type SharedMemorySet struct {
	client  SharedMemoryClient
	names   []string // registered region names
	regions []*SystemRegion
}

// PlaceInSharedMemory creates and registers system shared-memory regions
// for reqs on the server of c and rewrites reqs to reference them: inputs
// from their own regions, and outputs (the model's outputs, every one
// asked for) into regions of outputBytes each. prefix names the regions
// and their keys (/PREFIX_in0, /PREFIX_out0, ...): it must be unique to
// the run. The keys are unlinked once the server has registered them, so
// that nothing is left in /dev/shm even if the process is killed; the
// server keeps its mapping until Close unregisters the regions.
func PlaceInSharedMemory(ctx context.Context, c SharedMemoryClient, reqs []*InferRequest, outputs []string, outputBytes int, prefix string) (*SharedMemorySet, error) {
	s := &SharedMemorySet{client: c}
	fail := func(err error) (*SharedMemorySet, error) {
		s.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	for i, req := range reqs {
		size := 0
		for _, in := range req.Inputs {
			size += len(in.Data)
		}
		name := fmt.Sprintf("%s_in%d", prefix, i)
		r, err := s.add(ctx, name, max(size, 1))
		if err != nil {
			return fail(err)
		}
		off := 0
		for j := range req.Inputs {
			in := &req.Inputs[j]
			copy(r.Bytes()[off:], in.Data)
			in.SharedMemory = &SharedMemoryRef{Region: name, Offset: int64(off), ByteSize: int64(len(in.Data))}
			off += len(in.Data)
		}
	}
	if len(outputs) > 0 && outputBytes <= 0 {
		return fail(errors.New("outputs in shared memory need a region size above 0"))
	}
	refs := make(map[string]SharedMemoryRef, len(outputs))
	for i, o := range outputs {
		name := fmt.Sprintf("%s_out%d", prefix, i)
		if _, err := s.add(ctx, name, outputBytes); err != nil {
			return fail(err)
		}
		refs[o] = SharedMemoryRef{Region: name, ByteSize: int64(outputBytes)}
	}
	for _, req := range reqs {
		req.Outputs = outputs
		req.OutputSharedMemory = refs
	}
	return s, nil
}

// add creates region name of size bytes, registers it and unlinks its key.
func (s *SharedMemorySet) add(ctx context.Context, name string, size int) (*SystemRegion, error) {
	r, err := CreateSystemRegion("/"+name, size)
	if err != nil {
		return nil, err
	}
	s.regions = append(s.regions, r)
	if err := s.client.RegisterSystemSharedMemory(ctx, name, r.Key, 0, uint64(size)); err != nil {
		return nil, &ShmRegisterError{Key: r.Key, Err: err}
	}
	s.names = append(s.names, name)
	return r, r.Unlink()
}

// ShmRegisterError is a region the server would not register, with the
// server's reason (Err).
type ShmRegisterError struct {
	Key string
	Err error
}

// Error is the server's reason and, where the reason shows its cause, what
// to do about it (Hint).
func (e *ShmRegisterError) Error() string {
	msg := fmt.Sprintf("the server could not register shared-memory region %s (%v)", e.Key, e.Err)
	if h := e.Hint(); h != "" {
		msg += ": " + h
	}
	return msg
}

func (e *ShmRegisterError) Unwrap() error { return e.Err }

// shmStartFlag finds the flag a server's message says to start it with
// (Triton: "Client shared memory is disabled. Start the server with
// '--allow-client-shm=true' to enable.").
var shmStartFlag = regexp.MustCompile(`(?i)start the server with '?(--[a-z0-9-]+(?:=[^'\s]+)?)`)

// Hint is what to do about the refusal, read from the server's answer,
// or "" when it shows no cause beyond its own words:
//
//   - a server that says which flag to start it with (Triton 2.69 and
//     later refuse a client's shared memory unless started with
//     --allow-client-shm=true: UNIMPLEMENTED, HTTP 501): start it so;
//   - a server that could not open the region's key (Triton's "Unable to
//     open shared memory region"): it does not see this host's /dev/shm,
//     being on another host or in a container of its own.
func (e *ShmRegisterError) Hint() string {
	var te *Error
	if !errors.As(e.Err, &te) {
		return ""
	}
	if m := shmStartFlag.FindStringSubmatch(te.Message); m != nil {
		return "start the server with " + m[1]
	}
	if strings.HasPrefix(te.Message, "Unable to open shared memory region") {
		return "--shared-memory system needs the server on this host, seeing its /dev/shm (a container needs --ipc=host or /dev/shm mounted)"
	}
	return ""
}

// Regions is the number of regions created.
func (s *SharedMemorySet) Regions() int { return len(s.regions) }

// Close unregisters the regions from the server and unmaps them here; the
// keys are long unlinked. It tries every region whatever fails.
func (s *SharedMemorySet) Close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, n := range s.names {
		if err := s.client.UnregisterSystemSharedMemory(ctx, n); err != nil {
			errs = append(errs, fmt.Errorf("unregister shared-memory region %s: %w", n, err))
		}
	}
	for _, r := range s.regions {
		if err := r.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.names, s.regions = nil, nil
	return errors.Join(errs...)
}

// NewShmPrefix is a region prefix of its own for each set of regions:
// tritontop_PID_ and a random part, so that the runs of one process (a
// program's, a test's) never meet at a name, and a leftover names its
// process.
func NewShmPrefix() string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("tritontop_%d_%x", os.Getpid(), b)
}
