package triton

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// textServer answers every request with the given writes, each flushed
// at once, so that events arrive split as a server sends them.
func textServer(t *testing.T, contentType string, status int, writes ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		for _, s := range writes {
			_, _ = io.WriteString(w, s)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// recvAll sends one request over a text stream and reads its responses to
// the final one.
func recvAll(t *testing.T, url string, kind Endpoint, stream bool) []StreamResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ep, err := parseEndpoint(url, ProtocolHTTP)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newHTTPClient(ep, Options{Endpoint: kind, Stream: stream}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.Prepare(&InferRequest{Model: "llm", Inputs: []Tensor{{Name: LLMTextInput, Datatype: "BYTES", Shape: []int64{1}, Data: encodeBytesElem("hi")}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.OpenStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(p, "1-1"); err != nil {
		t.Fatal(err)
	}
	var out []StreamResponse
	for {
		r, err := st.Recv()
		if err != nil {
			t.Fatalf("Recv: %v after %+v", err, out)
		}
		out = append(out, r)
		if r.Final {
			break
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after CloseSend: %v, want EOF", err)
	}
	return out
}

func encodeBytesElem(s string) []byte {
	return append([]byte{byte(len(s)), 0, 0, 0}, s...)
}

// tokens counts the responses with a token, and returns the first error.
func tokens(rs []StreamResponse) (int, error) {
	n := 0
	var err error
	for _, r := range rs {
		if r.Err != nil && err == nil {
			err = r.Err
		}
		if !r.Empty {
			n++
		}
	}
	return n, err
}

func TestTextStreamErrorMidStream(t *testing.T) {
	// Two tokens, a keep-alive comment, an event split over three
	// writes, then Triton's error event and the end of the body.
	url := textServer(t, "text/event-stream; charset=utf-8", http.StatusOK,
		`data: {"text_output":"a"}`+"\n\n", ": keep-alive\n\n", `data: {"text_`, `output":"b"}`+"\n", "\n",
		`data: {"error":"model crashed"}`+"\n\n")
	rs := recvAll(t, url, EndpointGenerateStream, true)
	n, err := tokens(rs)
	var te *Error
	if n != 2 || !errors.As(err, &te) || te.Message != "model crashed" || !rs[len(rs)-1].Final {
		t.Fatalf("responses %+v: %d tokens, error %v", rs, n, err)
	}
}

func TestTextStreamOpenAIChunksAndUsage(t *testing.T) {
	chunk := func(content string) string {
		return fmt.Sprintf(`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q}}]}`+"\r\n\r\n", content)
	}
	url := textServer(t, "text/event-stream", http.StatusOK,
		`data: {"choices":[{"delta":{"role":"assistant","content":""}}]}`+"\n\n", chunk("x"), chunk(" y"), chunk(" z"),
		`data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":5,"total_tokens":6}}`+"\n\n", "data: [DONE]\n\n",
		"data: {\"after\": \"done is not read\"}\n\n")
	rs := recvAll(t, url, EndpointChat, true)
	n, err := tokens(rs)
	reported := 0
	for _, r := range rs {
		reported = max(reported, r.Tokens)
	}
	if n != 3 || err != nil || reported != 5 || len(rs) != 6 {
		t.Fatalf("responses %+v: %d tokens (usage %d), %v", rs, n, reported, err)
	}
}

func TestTextStreamAnswersInOneBody(t *testing.T) {
	for _, c := range []struct {
		name   string
		kind   Endpoint
		ctype  string
		status int
		body   string
		tokens int
		code   codes.Code
		msg    string
	}{
		{"generate: the text tokenized", EndpointGenerate, "application/json", 200, `{"model_name":"llm","text_output":"the model says"}`, 3, codes.OK, ""},
		{"generate: objects back to back", EndpointGenerate, "application/json", 200, `{"text_output":"the"}{"text_output":" model"}`, 2, codes.OK, ""},
		{"chat: usage", EndpointChat, "application/json", 200, `{"choices":[{"message":{"content":"a b"}}],"usage":{"completion_tokens":9}}`, 9, codes.OK, ""},
		{"completions: text without usage", EndpointCompletions, "application/json", 200, `{"choices":[{"text":"one two three four"}]}`, 4, codes.OK, ""},
		{"Triton's error", EndpointGenerate, "application/json", 400, `{"error":"bad input"}`, 0, codes.InvalidArgument, "bad input"},
		{"OpenAI's error", EndpointChat, "application/json", 404, `{"error":{"message":"no such model","type":"invalid_request_error","code":404}}`, 0, codes.NotFound, "no such model"},
		{"FastAPI's error", EndpointChat, "application/json", 400, `{"detail":"Unknown model: x"}`, 0, codes.InvalidArgument, "Unknown model: x"},
		{"not JSON", EndpointChat, "text/plain", 200, `oops`, 0, codes.Internal, "is not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := recvAll(t, textServer(t, c.ctype, c.status, c.body), c.kind, false)
			_, err := tokens(rs)
			if c.code == codes.OK {
				if err != nil || len(rs) != 2 || rs[0].Empty || rs[0].Tokens != c.tokens {
					t.Fatalf("responses %+v, %v; want one of %d tokens", rs, err, c.tokens)
				}
				return
			}
			var te *Error
			if !errors.As(err, &te) || te.Code != c.code || !strings.Contains(te.Message, c.msg) {
				t.Fatalf("error %v; want %s with %q", err, c.code, c.msg)
			}
		})
	}
}
