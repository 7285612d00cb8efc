package triton

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/tritontop/tritontop/triton/pb"
)

// SharedMemoryRef places a tensor in a registered system shared-memory
// region (Triton's shared-memory extension): the request carries the
// region's name, the offset and the byte size instead of the data.
type SharedMemoryRef struct {
	Region   string
	Offset   int64
	ByteSize int64
}

// The tensor parameters of Triton's shared-memory extension.
const (
	shmRegionParam   = "shared_memory_region"
	shmOffsetParam   = "shared_memory_offset"
	shmByteSizeParam = "shared_memory_byte_size"
)

// params are the ref's tensor parameters (no offset when it is 0, as
// Triton's clients send it).
func (r SharedMemoryRef) params() map[string]any {
	p := map[string]any{shmRegionParam: r.Region, shmByteSizeParam: r.ByteSize}
	if r.Offset != 0 {
		p[shmOffsetParam] = r.Offset
	}
	return p
}

// SharedMemoryClient is a client that registers system shared-memory
// regions with the server; both of Dial's clients are one.
type SharedMemoryClient interface {
	// RegisterSystemSharedMemory registers byteSize bytes from offset of
	// the POSIX shared-memory object key ("/name") as region name.
	RegisterSystemSharedMemory(ctx context.Context, name, key string, offset, byteSize uint64) error
	// UnregisterSystemSharedMemory unregisters region name; every region
	// when name is empty.
	UnregisterSystemSharedMemory(ctx context.Context, name string) error
}

var (
	_ SharedMemoryClient = (*grpcClient)(nil)
	_ SharedMemoryClient = (*httpClient)(nil)
)

// RegisterSystemSharedMemory implements SharedMemoryClient.
func (c *grpcClient) RegisterSystemSharedMemory(ctx context.Context, name, key string, offset, byteSize uint64) error {
	_, err := c.svc().SystemSharedMemoryRegister(c.ctx(ctx), &pb.SystemSharedMemoryRegisterRequest{Name: name, Key: key, Offset: offset, ByteSize: byteSize}, c.opts...)
	return grpcError(ctx, err)
}

// UnregisterSystemSharedMemory implements SharedMemoryClient.
func (c *grpcClient) UnregisterSystemSharedMemory(ctx context.Context, name string) error {
	_, err := c.svc().SystemSharedMemoryUnregister(c.ctx(ctx), &pb.SystemSharedMemoryUnregisterRequest{Name: name}, c.opts...)
	return grpcError(ctx, err)
}

// RegisterSystemSharedMemory implements SharedMemoryClient.
func (c *httpClient) RegisterSystemSharedMemory(ctx context.Context, name, key string, offset, byteSize uint64) error {
	body, err := json.Marshal(map[string]any{"key": key, "offset": offset, "byte_size": byteSize})
	if err != nil {
		return err
	}
	return c.postOK(ctx, "/v2/systemsharedmemory/region/"+url.PathEscape(name)+"/register", body)
}

// UnregisterSystemSharedMemory implements SharedMemoryClient.
func (c *httpClient) UnregisterSystemSharedMemory(ctx context.Context, name string) error {
	path := "/v2/systemsharedmemory/unregister"
	if name != "" {
		path = "/v2/systemsharedmemory/region/" + url.PathEscape(name) + "/unregister"
	}
	return c.postOK(ctx, path, []byte{})
}

// postOK POSTs body to path and wants a 200.
func (c *httpClient) postOK(ctx context.Context, path string, body []byte) error {
	status, b, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("POST %s: %w", path, httpError(status, b))
	}
	return nil
}
