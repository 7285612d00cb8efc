package interop

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Options are a test's choices for its server.
type Options struct {
	// Models are the models of the Triton folder's repository to copy into
	// the server's own; nil copies them all.
	Models []string
	// Edit changes the copied repository (its path is repo) before the
	// server starts: WriteConfig replaces or adds a model's config.pbtxt.
	Edit func(t testing.TB, repo string)
	// Explicit starts the server with --model-control-mode=explicit
	// --load-model=*: every model loaded, and load, unload and config
	// overrides allowed through the repository API.
	Explicit bool
	// AllowClientShm starts it with --allow-client-shm=true: without it,
	// this Triton refuses to register a client's shared memory.
	AllowClientShm bool
	// Args are more flags, given last.
	Args []string
}

// Server is a running tritonserver of one test.
type Server struct {
	Install
	// Repo is the server's own model repository.
	Repo string
	// GRPC, HTTP and Metrics are the endpoints' host:port on 127.0.0.1.
	GRPC, HTTP, Metrics string
	// StartUp is the time from the process's start to its first ready
	// answer.
	StartUp time.Duration

	log    *logBuffer
	cmd    *exec.Cmd
	exited chan struct{}
}

// readyWithin bounds a server's start; portTries is how many times a
// start whose ports were taken meanwhile is tried with new ones.
const (
	readyWithin = time.Minute
	portTries   = 3
)

// Start starts a Triton server for t with a model repository of its own,
// waits until it is ready and ends it when t ends; it skips t when the
// server cannot run here (see Locate).
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	in := Locate(t)
	repo := filepath.Join(t.TempDir(), "models")
	if err := copyModels(in.Models, repo, o.Models); err != nil {
		t.Fatalf("interop: copy the model repository: %v", err)
	}
	if o.Edit != nil {
		o.Edit(t, repo)
	}
	for try := 1; ; try++ {
		s, err := start(t, in, repo, o)
		if err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) || try == portTries {
			t.Fatalf("interop: %v", err)
		}
	}
}

// errPortTaken is a server that could not bind one of its ports.
var errPortTaken = errors.New("a port was taken")

// start runs one try of Start on new ports.
func start(t testing.TB, in Install, repo string, o Options) (*Server, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	s := &Server{
		Install: in, Repo: repo,
		GRPC: hostPort(ports[0]), HTTP: hostPort(ports[1]), Metrics: hostPort(ports[2]),
		log: &logBuffer{}, exited: make(chan struct{}),
	}
	args := []string{
		"--model-repository=" + repo, "--backend-directory=" + in.Backends,
		"--grpc-address=127.0.0.1", "--grpc-port=" + strconv.Itoa(ports[0]),
		"--http-address=127.0.0.1", "--http-port=" + strconv.Itoa(ports[1]),
		"--metrics-address=127.0.0.1", "--metrics-port=" + strconv.Itoa(ports[2]),
		"--exit-timeout-secs=1",
	}
	if o.Explicit {
		args = append(args, "--model-control-mode=explicit", "--load-model=*")
	}
	if o.AllowClientShm {
		args = append(args, "--allow-client-shm=true")
	}
	args = append(args, o.Args...)
	s.cmd = exec.Command(in.ServerBin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = dieWithParent()
	begin := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", in.ServerBin, err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("tritonserver %s log:\n%s", strings.Join(args, " "), s.log.tail(16<<10))
		}
	})
	if err := s.awaitReady(); err != nil {
		s.stop()
		if strings.Contains(s.log.String(), "already in use") {
			return nil, fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return nil, fmt.Errorf("%v; its log:\n%s", err, s.log.tail(16<<10))
	}
	s.StartUp = time.Since(begin)
	return s, nil
}

// awaitReady polls v2/health/ready until it answers 200 and the gRPC and
// metrics endpoints take connections (Triton starts them one after the
// other), the process exits, or readyWithin passes.
func (s *Server) awaitReady() error {
	client := &http.Client{Timeout: 2 * time.Second}
	url := "http://" + s.HTTP + "/v2/health/ready"
	deadline := time.NewTimer(readyWithin)
	defer deadline.Stop()
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && listening(s.GRPC) && listening(s.Metrics) {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("tritonserver exited before it was ready (%v)", s.cmd.ProcessState)
		case <-deadline.C:
			return fmt.Errorf("tritonserver was not ready within %v", readyWithin)
		case <-poll.C:
		}
	}
}

// listening reports whether addr takes a TCP connection.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// stop kills the server, if it still runs, and waits for its end.
func (s *Server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// PID is the server process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Log is the server's output so far.
func (s *Server) Log() string { return s.log.String() }

// MetricsURL is the server's Prometheus endpoint.
func (s *Server) MetricsURL() string { return "http://" + s.Metrics + "/metrics" }

// freePorts asks the kernel for n free ports on 127.0.0.1, holding each
// until all are chosen so that they differ.
func freePorts(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("a free port: %w", err)
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func hostPort(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)) }

// copyModels copies the models named (all when names is nil) from the
// repository src into dst, folders and files, empty version folders too.
func copyModels(src, dst string, names []string) error {
	if names == nil {
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, n := range names {
		if err := os.CopyFS(filepath.Join(dst, n), os.DirFS(filepath.Join(src, n))); err != nil {
			return fmt.Errorf("model %s: %w", n, err)
		}
	}
	return nil
}

// WriteConfig writes text as the config.pbtxt of model in repo, making the
// model's folder and its version folder 1 when the model is new.
func WriteConfig(t testing.TB, repo, model, text string) {
	t.Helper()
	dir := filepath.Join(repo, model)
	if err := os.MkdirAll(filepath.Join(dir, "1"), 0o755); err != nil {
		t.Fatalf("interop: model folder: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.pbtxt"), []byte(text), 0o644); err != nil {
		t.Fatalf("interop: config of %s: %v", model, err)
	}
}
