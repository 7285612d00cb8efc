package interop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/tritontop/tritontop/triton/pb"
)

// A Request is one request of a differential test, sent as it is to each
// server: HTTPRequest, GRPCCall or GRPCStream.
type Request interface {
	// Send sends the request to the server at the endpoints and returns its
	// answer; an error is a failure to get one (a connection refused, a
	// timeout), not an error answer.
	Send(ctx context.Context, to Endpoints) (Answer, error)
	// Protocol is "http" or "grpc".
	Protocol() string
}

// Endpoints are a server's HTTP address (host:port) and a gRPC
// connection to it.
type Endpoints struct {
	HTTP   string
	Client *http.Client
	GRPC   *grpc.ClientConn
}

// HTTPRequest is an HTTP/REST request: a method, a path (with any query)
// and a body, with the headers given.
type HTTPRequest struct {
	Method, Path string
	Header       map[string]string
	Body         []byte
}

// Protocol implements Request.
func (HTTPRequest) Protocol() string { return "http" }

// Send implements Request.
func (r HTTPRequest) Send(ctx context.Context, to Endpoints) (Answer, error) {
	var body io.Reader
	if r.Body != nil {
		body = strings.NewReader(string(r.Body))
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, "http://"+to.HTTP+r.Path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := to.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", r.Method, r.Path, err)
	}
	return httpAnswer(resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Inference-Header-Content-Length"), b), nil
}

// GRPCCall is a unary gRPC call: Method is the full method name
// ("/inference.GRPCInferenceService/ModelInfer"); the response's type is
// the method's output type, looked up in the registered descriptors.
type GRPCCall struct {
	Method  string
	Message proto.Message
}

// Protocol implements Request.
func (GRPCCall) Protocol() string { return "grpc" }

// Send implements Request.
func (c GRPCCall) Send(ctx context.Context, to Endpoints) (Answer, error) {
	resp, err := newOutput(c.Method)
	if err != nil {
		return nil, err
	}
	err = to.GRPC.Invoke(ctx, c.Method, c.Message, resp)
	a, ok := grpcStatus(err)
	if !ok {
		return nil, fmt.Errorf("%s: %w", c.Method, err)
	}
	if err == nil {
		body, err := messageJSON(resp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Method, err)
		}
		if body != nil {
			a["body"] = body
		}
	}
	return a, nil
}

// GRPCStream is a ModelStreamInfer stream: its requests are sent in
// order, then the stream is closed for sending and its responses are read
// until the server ends it.
type GRPCStream struct {
	Requests []*pb.ModelInferRequest
}

// Protocol implements Request.
func (GRPCStream) Protocol() string { return "grpc" }

const streamMethod = "/inference.GRPCInferenceService/ModelStreamInfer"

// Send implements Request.
func (s GRPCStream) Send(ctx context.Context, to Endpoints) (Answer, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := to.GRPC.NewStream(ctx, &grpc.StreamDesc{StreamName: "ModelStreamInfer", ServerStreams: true, ClientStreams: true}, streamMethod)
	if err != nil {
		return nil, fmt.Errorf("ModelStreamInfer: %w", err)
	}
	for _, r := range s.Requests {
		if err := st.SendMsg(r); err != nil {
			break // the server ended the stream: RecvMsg says why
		}
	}
	if err := st.CloseSend(); err != nil {
		return nil, fmt.Errorf("ModelStreamInfer: close: %w", err)
	}
	var responses []any
	for {
		m := &pb.ModelStreamInferResponse{}
		err := st.RecvMsg(m)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			a, ok := grpcStatus(err)
			if !ok {
				return nil, fmt.Errorf("ModelStreamInfer: %w", err)
			}
			if len(responses) > 0 {
				a["responses"] = responses
			}
			return a, nil
		}
		body, err := messageJSON(m)
		if err != nil {
			return nil, fmt.Errorf("ModelStreamInfer: %w", err)
		}
		responses = append(responses, body)
	}
}

// grpcStatus is the answer's status and message for err (nil: OK); ok is
// false when err is not a status from the server but the context's end.
func grpcStatus(err error) (Answer, bool) {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return nil, false
	}
	st, _ := status.FromError(err)
	a := Answer{"status": st.Code().String()}
	if st.Message() != "" {
		a["message"] = st.Message()
	}
	return a, true
}

// newOutput makes an empty response message of a gRPC method.
func newOutput(method string) (proto.Message, error) {
	svc, name, ok := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	if !ok {
		return nil, fmt.Errorf("gRPC method %q: want /package.Service/Method", method)
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil, fmt.Errorf("gRPC method %q: %w", method, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("gRPC method %q: %s is not a service", method, svc)
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return nil, fmt.Errorf("gRPC method %q: no such method", method)
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		return nil, fmt.Errorf("gRPC method %q: %w", method, err)
	}
	return mt.New().Interface(), nil
}

// messageJSON is m as a JSON tree, with the proto's field names; nil for
// a message with no field set.
func messageJSON(m proto.Message) (any, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	if o, ok := v.(map[string]any); ok && len(o) == 0 {
		return nil, nil
	}
	return v, nil
}

// GRPCMethod is the full name of a method of Triton's inference service.
func GRPCMethod(name string) string { return "/inference.GRPCInferenceService/" + name }

// Describe is a request in one line, for a test's log: the method and
// path, or the gRPC method, and the start of the body.
func Describe(r Request) string {
	switch x := r.(type) {
	case HTTPRequest:
		s := x.Method + " " + x.Path
		if len(x.Body) > 0 {
			b := string(x.Body)
			if len(b) > 200 {
				b = b[:200] + "…(" + strconv.Itoa(len(x.Body)) + " bytes)"
			}
			s += " " + strings.ToValidUTF8(b, "?")
		}
		return s
	case GRPCCall:
		b, _ := protojson.MarshalOptions{UseProtoNames: true}.Marshal(x.Message)
		return x.Method + " " + string(b)
	case GRPCStream:
		parts := make([]string, len(x.Requests))
		for i, m := range x.Requests {
			b, _ := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
			parts[i] = string(b)
		}
		return streamMethod + " [" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%T", r)
}
