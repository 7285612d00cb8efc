//go:build linux

package triton_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
	"github.com/tritontop/tritontop/sim"
	"github.com/tritontop/tritontop/triton"
)

// TestHelperSimServer is the simulator in a child process for
// BenchmarkClientCPUResNet50, so that the CPU the benchmark reads is the
// client's alone. It serves until its stdin closes; run directly, it skips.
func TestHelperSimServer(t *testing.T) {
	if os.Getenv("TRITONTOP_TEST_SIM_SERVER") != "1" {
		t.Skip("helper process for benchmarks")
	}
	srv, err := sim.Start(context.Background(), sim.Config{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Repository: sim.DemoRepository(), Engine: sim.EngineOptions{AllowClientShm: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fmt.Println(srv.GRPCAddr(), srv.HTTPAddr())
	io.Copy(io.Discard, os.Stdin)
}

// simProcess starts TestHelperSimServer and returns its gRPC and HTTP
// addresses.
func simProcess(b *testing.B) (grpcAddr, httpAddr string) {
	b.Helper()
	if f := strings.Fields(os.Getenv("TRITONTOP_BENCH_SIM")); len(f) == 2 {
		return f[0], f[1]
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := testproc.Command(exe, "-test.run=^TestHelperSimServer$")
	cmd.Env = append(os.Environ(), "TRITONTOP_TEST_SIM_SERVER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("helper simulator: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 2 {
		b.Fatalf("helper simulator said %q", line)
	}
	return f[0], f[1]
}

// cpuTime is this process's user and system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClientCPUResNet50 measures the client's CPU per request on the
// demo's resnet50 (one FP32 3x224x224 input, 588 KiB a batch item, and
// 1000 FP32 outputs), sending the tensors over the network and with
// --shared-memory system's placement, over gRPC and HTTP, at batch 1 with
// 4 and 16 requests in flight and at batch 8 with 4, against the
// simulator in another process: cpu-µs/req is the client's alone. The
// clients connect as a tritontop run does by default (connect.go): one
// gRPC connection; with HTTP, one connection per request in flight.
// req-B and resp-B are the bytes of a request and of its response (Send's
// count), which show what each path puts on the wire.
//
// With TRITONTOP_BENCH_SIM="GRPC_ADDR HTTP_ADDR" it uses that server
// instead of starting one (to trace the benchmark's process alone).
func BenchmarkClientCPUResNet50(b *testing.B) {
	grpcAddr, httpAddr := simProcess(b)
	ctx := context.Background()
	for _, proto := range []string{"grpc", "http"} {
		addr, conns := grpcAddr, 1
		if proto == "http" {
			addr, conns = httpAddr, 0
		}
		for _, run := range []struct {
			mode            string
			batch, inFlight int
		}{
			{"network", 1, 4}, {"shm", 1, 4},
			{"network", 1, 16}, {"shm", 1, 16},
			{"network", 8, 4}, {"shm", 8, 4},
		} {
			b.Run(fmt.Sprintf("%s/b%d/c%d/%s", proto, run.batch, run.inFlight, run.mode), func(b *testing.B) {
				c, err := triton.Dial(ctx, addr, triton.Options{Protocol: proto, Connections: conns})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				md, _ := c.ModelMetadata(ctx, "resnet50", "")
				cfg, _ := c.ModelConfig(ctx, "resnet50", "")
				reqs, err := triton.BuildRequests(md, cfg, triton.InputOptions{BatchSize: run.batch})
				if err != nil {
					b.Fatal(err)
				}
				if run.mode == "shm" {
					set, err := triton.PlaceInSharedMemory(ctx, c.(triton.SharedMemoryClient), reqs, []string{"output"}, 100*1024, triton.NewShmPrefix())
					if err != nil {
						b.Fatal(err)
					}
					defer set.Close(ctx)
				}
				p, err := c.Prepare(reqs[0])
				if err != nil {
					b.Fatal(err)
				}
				inFlight := run.inFlight
				var wg sync.WaitGroup
				var errOnce sync.Once
				var sendErr error
				var respBytes atomic.Int64
				start := cpuTime(b)
				b.ResetTimer()
				for w := range inFlight {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := w; j < b.N; j += inFlight {
							n, err := c.Send(ctx, p)
							if err != nil {
								errOnce.Do(func() { sendErr = err })
								return
							}
							if j == w {
								respBytes.Store(int64(n))
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				if sendErr != nil {
					b.Fatal(sendErr)
				}
				b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/req")
				b.ReportMetric(float64(p.Size()), "req-B")
				b.ReportMetric(float64(respBytes.Load()), "resp-B")
			})
		}
	}
}
