package triton

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/pb"
)

// The model repository extension: loading a model, with or without a
// configuration override, and unloading it. Triton allows both only when
// it was started with --model-control-mode=explicit.

// ErrNotExplicit is wrapped by the error of a load or unload refused
// because the server does not let clients control its models (its model
// control mode is none or poll).
var ErrNotExplicit = errors.New("the server does not let clients load or unload models: start tritonserver with --model-control-mode=explicit (and --load-model=* to load every model at start)")

// notExplicitMessage is how Triton answers a load or unload outside
// explicit model control mode, in both other modes.
const notExplicitMessage = "explicit model load / unload is not allowed if polling is enabled"

// LoadModel implements Client over gRPC: RepositoryModelLoad, with the
// override as the "config" string parameter.
func (c *grpcClient) LoadModel(ctx context.Context, model, config string) error {
	req := &pb.RepositoryModelLoadRequest{ModelName: model}
	if config != "" {
		req.Parameters = map[string]*pb.ModelRepositoryParameter{
			"config": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: config}},
		}
	}
	_, err := c.svc().RepositoryModelLoad(c.ctx(ctx), req, c.opts...)
	return repositoryError("load", model, config != "", grpcError(ctx, err))
}

// UnloadModel implements Client over gRPC: RepositoryModelUnload.
func (c *grpcClient) UnloadModel(ctx context.Context, model string) error {
	_, err := c.svc().RepositoryModelUnload(c.ctx(ctx), &pb.RepositoryModelUnloadRequest{ModelName: model}, c.opts...)
	return repositoryError("unload", model, false, grpcError(ctx, err))
}

// LoadModel implements Client over HTTP: POST
// v2/repository/models/{model}/load, with the override as the "config"
// parameter, a string holding the ModelConfig's JSON.
func (c *httpClient) LoadModel(ctx context.Context, model, config string) error {
	var body []byte
	if config != "" {
		var err error
		body, err = json.Marshal(map[string]map[string]string{"parameters": {"config": config}})
		if err != nil {
			return fmt.Errorf("load %s: %w", model, err)
		}
	}
	return repositoryError("load", model, config != "", c.repositoryPost(ctx, model, "load", body))
}

// UnloadModel implements Client over HTTP: POST
// v2/repository/models/{model}/unload.
func (c *httpClient) UnloadModel(ctx context.Context, model string) error {
	return repositoryError("unload", model, false, c.repositoryPost(ctx, model, "unload", nil))
}

// repositoryPost posts body (nil: none) to the model's repository action.
func (c *httpClient) repositoryPost(ctx context.Context, model, action string, body []byte) error {
	path := "/v2/repository/models/" + url.PathEscape(model) + "/" + action
	status, resp, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return httpError(status, resp)
	}
	return nil
}

// repositoryError puts a load or unload's failure in one line that names
// the model and says what to do where Triton's own message does not: a
// server outside explicit model control, a configuration Triton refused
// while reading the repository (its reason is only in the server's log).
// The *Error stays reachable with errors.As.
func repositoryError(op, model string, override bool, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return fmt.Errorf("%s %s: %w", op, model, err)
	}
	// Triton ends some load errors with ";\n", which would print as a
	// literal \n.
	e.Message = strings.TrimRight(strings.TrimSuffix(e.Message, `\n`), "; ")
	switch {
	case strings.Contains(e.Message, notExplicitMessage):
		return fmt.Errorf("%s %s: %w (Triton: %w)", op, model, ErrNotExplicit, err)
	case override && e.Code == codes.Internal && strings.Contains(e.Message, "failed to poll from model repository"):
		return fmt.Errorf("%s %s with a configuration override: Triton refused the configuration while reading it (the reason is in the server's log, e.g. a preferred batch size over max_batch_size or a field it does not know): %w", op, model, err)
	}
	return fmt.Errorf("%s %s: %w", op, model, err)
}
