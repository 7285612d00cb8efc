// Package interop tests tritontop, and its simulator, against a real
// Triton Inference Server: the harness here starts one for a test, and the
// package's tests hold tritontop's numbers against the server's own.
//
// # The server
//
// Start runs Triton's tritonserver from the Triton folder, which is
// $TRITONTOP_TRITON_DIR when set, else ../shared/triton beside the
// repository's root (bin/tritonserver, bin/perf_analyzer, backends/,
// models/; see that folder's README). Each server gets:
//
//   - a model repository of its own, copied from the folder's models/ into
//     the test's t.TempDir() (Options.Models picks some), which
//     Options.Edit may change before the start (WriteConfig replaces or
//     adds a model's config.pbtxt);
//   - free ports on 127.0.0.1 for gRPC, HTTP and metrics, asked of the
//     kernel (a port taken by another process between the ask and the
//     server's bind is retried with new ones);
//   - the flags of Options: --model-control-mode=explicit --load-model=*
//     (Explicit), --allow-client-shm=true (AllowClientShm), and Args last.
//
// Start returns once v2/health/ready answers 200, polled with no fixed
// sleep, and fails the test with the server's log when the process exits
// first or readiness does not come within a minute. The process gets
// SIGKILL when the test's process dies (Pdeathsig), and at the test's end
// (t.Cleanup); its log (standard output and error) is kept, and printed
// when the test failed.
//
// When the Triton folder, the server, its backends or its runtime
// libraries (Debian 12 packages, listed in the folder's README) are not
// there, Locate, Start and PerfAnalyzer skip the test with one line naming
// what is missing: a clone of the repository has no ../shared.
//
// # Reading the server
//
// Server.Statistics reads a model's cumulative statistics from the HTTP
// endpoint (v2/models/NAME/stats) with its own JSON types, not through
// tritontop's client; Delta subtracts two readings and Averages applies
// perf_analyzer's formulas to the deltas (integer division of the
// nanoseconds by the count, 0 for a count of 0), so that a test compares
// tritontop with the server's numbers as perf_analyzer would compute them.
// Server.PerfAnalyzer runs the perf_analyzer beside the server against it
// and parses its printed report and its CSV (-f); PerfAnalyzerAt sends it
// to another address (a proxy in front of the server). ModelStats keeps
// the batch_stats and response_stats too, which Delta subtracts, and Sum
// adds the deltas of replicas.
//
// # Driving the server
//
// In explicit model control (Options.Explicit), LoadModel loads a model,
// with a config override in JSON when given, and UnloadModel unloads it,
// through the repository API; RepositoryIndex and ModelState read the
// repository index (Triton unloads in the background: UNLOADING, then
// UNAVAILABLE), ModelConfig the config the server serves.
// SystemSharedMemory lists the client's shared-memory regions registered
// on it.
//
// # The tests
//
// The package's tests run tritontop in-process (package session: every
// flag of a load run is a field of session.Config) against a server of
// their own, for a second or so of load, and hold its counts, server
// times and batches against the server's deltas over the run; the
// capture proxy runs as the built binary. docs/interop.md lists what each
// test asserts and the differences from the simulator they found.
//
// # Cost
//
// A server is ready 70–100 ms after its start on an idle 2-core host, and
// within about half a second with two CPU hogs running (Server.StartUp;
// the tests log it), so each test starts its own and runs in parallel
// with the others.
package interop
