// Command floor is the cheapest possible gRPC load client, the floor that
// tritontop's driver is measured against: N goroutines each send one
// pre-marshalled ModelInfer request for the identity model back to back
// over one grpc-go connection, without decoding the responses.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/triton/pb"
)

// rawCodec sends bytes as they are and keeps responses undecoded.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }

func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*int) = len(data)
	return nil
}

func main() {
	addr := flag.String("u", "127.0.0.1:8001", "server gRPC address")
	conc := flag.Int("concurrency", 4, "requests in flight")
	dur := flag.Duration("d", 10*time.Second, "how long to send")
	flag.Parse()

	conn, err := grpc.NewClient(*addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	req, err := proto.Marshal(&pb.ModelInferRequest{
		ModelName: "identity",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 16}},
		},
		RawInputContents: [][]byte{make([]byte, 64)},
	})
	if err != nil {
		log.Fatal(err)
	}
	const method = "/inference.GRPCInferenceService/ModelInfer"
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var n int
				if err := conn.Invoke(ctx, method, &req, &n); err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
					}
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	fmt.Printf("completed %d failed %d\n", ok.Load(), failed.Load())
	if ok.Load() == 0 {
		os.Exit(1)
	}
}
