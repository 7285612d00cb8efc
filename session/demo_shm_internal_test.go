package session

import (
	"context"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton/pb"
)

// TestDemoSimulatorAllowsClientShm: the demo's in-process simulator
// accepts client shared memory, as tritonserver --allow-client-shm=true
// (off by default in Triton and in tritontop sim): a registration gets
// past the switch to the region's own check.
func TestDemoSimulatorAllowsClientShm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f := &Config{Given: map[string]bool{"u": true}, URL: "127.0.0.1:1"}
	srv, err := startDemoSimulator(ctx, f, DemoConfig{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = pb.NewGRPCInferenceServiceClient(conn).SystemSharedMemoryRegister(ctx,
		&pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: "/tritontop_demo_no_such_region", ByteSize: 64})
	if st, _ := status.FromError(err); st.Code() != codes.Internal || st.Message() != "Unable to open shared memory region: '/tritontop_demo_no_such_region'" {
		t.Errorf("register = %v; want the region's own error, not the switch's UNIMPLEMENTED", err)
	}
}
