package triton

import (
	"context"

	"google.golang.org/grpc"

	"github.com/tritontop/tritontop/triton/pb"
)

// ResetConnectBackoff makes every connection that failed dial again now
// instead of after gRPC's backoff, which grows to two minutes while a
// server stays away: a health probe calls it so that a server restarted on
// the same address is seen at the next probe. Balancers find it with a
// type assertion; the HTTP client dials per request and has none.
func (c *grpcClient) ResetConnectBackoff() {
	for _, conn := range c.conns {
		conn.ResetConnectBackoff()
	}
}

// ServerLiveWait is ServerLive that waits, until ctx ends, for a
// connection that is down to come up (gRPC's wait for ready) instead of
// failing at once: a probe of a server that is coming back then answers
// as soon as the connection does, not at the probe after.
func (c *grpcClient) ServerLiveWait(ctx context.Context) (bool, error) {
	opts := append(c.opts[:len(c.opts):len(c.opts)], grpc.WaitForReady(true))
	r, err := c.svc().ServerLive(c.ctx(ctx), &pb.ServerLiveRequest{}, opts...)
	if err != nil {
		return false, grpcError(ctx, err)
	}
	return r.GetLive(), nil
}
