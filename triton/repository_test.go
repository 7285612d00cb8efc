package triton

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritontop/tritontop/triton/pb"
)

// repoServer answers the repository extension as Triton does (its
// messages as the real server gives them, checked in the interop
// package): in explicit mode a load succeeds unless the override is
// refused; otherwise every load and unload is refused.
type repoServer struct {
	pb.UnimplementedGRPCInferenceServiceServer
	explicit bool

	mu     sync.Mutex
	model  string
	config string // the last override, "" for none
	action string
}

func (s *repoServer) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: true}, nil
}

// answer is what Triton says to an action on model with the override:
// the gRPC code and message, codes.OK for success.
func (s *repoServer) answer(action, model, config string) (codes.Code, string) {
	s.mu.Lock()
	s.action, s.model, s.config = action, model, config
	s.mu.Unlock()
	switch {
	case !s.explicit:
		return codes.Unavailable, "explicit model load / unload is not allowed if polling is enabled"
	case strings.Contains(config, "KIND_GPU"):
		return codes.InvalidArgument, "load failed for model '" + model + "': version 1 is at UNAVAILABLE state: Invalid argument: instance group " + model + "_0 of model " + model + " has kind KIND_GPU but server does not support GPUs;\n"
	case strings.Contains(config, "bad"):
		return codes.Internal, "failed to load '" + model + "', failed to poll from model repository"
	}
	return codes.OK, ""
}

func (s *repoServer) RepositoryModelLoad(_ context.Context, r *pb.RepositoryModelLoadRequest) (*pb.RepositoryModelLoadResponse, error) {
	config := ""
	if p, ok := r.GetParameters()["config"]; ok {
		sp, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_StringParam)
		if !ok {
			return nil, status.Error(codes.InvalidArgument, "invalid value type for load parameter 'config', expected string_param.")
		}
		config = sp.StringParam
	}
	if code, msg := s.answer("load", r.GetModelName(), config); code != codes.OK {
		return nil, status.Error(code, msg)
	}
	return &pb.RepositoryModelLoadResponse{}, nil
}

func (s *repoServer) RepositoryModelUnload(_ context.Context, r *pb.RepositoryModelUnloadRequest) (*pb.RepositoryModelUnloadResponse, error) {
	if code, msg := s.answer("unload", r.GetModelName(), ""); code != codes.OK {
		return nil, status.Error(code, msg)
	}
	return &pb.RepositoryModelUnloadResponse{}, nil
}

// seen is the last action, model and override the server saw.
func (s *repoServer) seen() (action, model, config string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.action, s.model, s.config
}

// ServeHTTP answers POST v2/repository/models/{m}/load|unload, reading the
// override from {"parameters": {"config": "..."}}.
func (s *repoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v2/health/live" {
		w.WriteHeader(http.StatusOK)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v2/repository/models/")
	model, action, _ := strings.Cut(rest, "/")
	if !ok || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Parameters map[string]string `json:"parameters"`
	}
	if b, _ := io.ReadAll(r.Body); len(b) > 0 {
		if err := json.Unmarshal(b, &body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
	}
	code, msg := s.answer(action, model, body.Parameters["config"])
	if code == codes.OK {
		w.WriteHeader(http.StatusOK)
		return
	}
	st := map[codes.Code]int{codes.Unavailable: 503, codes.InvalidArgument: 400, codes.Internal: 500}[code]
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.WriteHeader(st)
	w.Write(b)
}

// startRepoServers serves s over gRPC and HTTP on loopback and dials a
// client of each protocol.
func startRepoServers(t *testing.T, s *repoServer) map[string]Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	pb.RegisterGRPCInferenceServiceServer(g, s)
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	h := httptest.NewServer(s)
	t.Cleanup(h.Close)
	out := map[string]Client{}
	for proto, addr := range map[string]string{"grpc": lis.Addr().String(), "http": strings.TrimPrefix(h.URL, "http://")} {
		c, err := Dial(context.Background(), addr, Options{Protocol: proto})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		out[proto] = c
	}
	return out
}

// TestLoadModelSendsTheOverride: both protocols carry the override as
// Triton reads it (gRPC's string_param "config", HTTP's
// parameters.config string), and a plain load or an unload carries none.
func TestLoadModelSendsTheOverride(t *testing.T) {
	t.Parallel()
	s := &repoServer{explicit: true}
	const cfg = `{"name":"m","max_batch_size":8,"instance_group":[{"kind":"KIND_CPU","count":2}]}`
	for proto, c := range startRepoServers(t, s) {
		ctx := context.Background()
		if err := c.LoadModel(ctx, "m", cfg); err != nil {
			t.Fatalf("%s: load with an override: %v", proto, err)
		}
		if a, m, c := s.seen(); a != "load" || m != "m" || c != cfg {
			t.Errorf("%s: the server saw %s %q with %q", proto, a, m, c)
		}
		err := c.LoadModel(ctx, "m", "")
		if _, _, c := s.seen(); err != nil || c != "" {
			t.Errorf("%s: a plain load: %v, override %q", proto, err, c)
		}
		err = c.UnloadModel(ctx, "m")
		if a, _, _ := s.seen(); err != nil || a != "unload" {
			t.Errorf("%s: unload: %v (%s)", proto, err, a)
		}
	}
}

// TestRepositoryErrorsAreOneLine: a server outside explicit mode is said
// so in one line with Triton's message; a refused override and a failed
// instance group are one line each, naming the model, with Triton's code
// kept.
func TestRepositoryErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	polling := startRepoServers(t, &repoServer{})
	explicit := startRepoServers(t, &repoServer{explicit: true})
	cases := []struct {
		name    string
		clients map[string]Client
		config  string
		code    codes.Code
		want    []string
	}{
		{"not explicit", polling, "", codes.Unavailable, []string{"load m:", "--model-control-mode=explicit", "explicit model load / unload is not allowed if polling is enabled"}},
		{"refused override", explicit, `{"bad":1}`, codes.Internal, []string{"load m with a configuration override", "server's log", "failed to poll from model repository"}},
		{"instance group", explicit, `{"instance_group":[{"kind":"KIND_GPU"}]}`, codes.InvalidArgument, []string{"load m:", "KIND_GPU but server does not support GPUs"}},
	}
	for _, tc := range cases {
		for proto, c := range tc.clients {
			err := c.LoadModel(context.Background(), "m", tc.config)
			if err == nil {
				t.Fatalf("%s over %s: no error", tc.name, proto)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || strings.HasSuffix(msg, `\n`) || strings.Contains(msg, `;\n`) {
				t.Errorf("%s over %s: not one clean line: %q", tc.name, proto, msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s over %s: %q lacks %q", tc.name, proto, msg, w)
				}
			}
			if ErrorCode(err) != tc.code {
				t.Errorf("%s over %s: code %v, want %v", tc.name, proto, ErrorCode(err), tc.code)
			}
			if notExplicit := errors.Is(err, ErrNotExplicit); notExplicit != (tc.code == codes.Unavailable) {
				t.Errorf("%s over %s: errors.Is(ErrNotExplicit) = %v", tc.name, proto, notExplicit)
			}
		}
	}
	if err := polling["grpc"].UnloadModel(context.Background(), "m"); !errors.Is(err, ErrNotExplicit) {
		t.Errorf("unload outside explicit mode: %v", err)
	}
}
