package triton

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readEvents reads every event of r as "type:data" strings.
func readEvents(t testing.TB, r io.Reader) ([]string, int, error) {
	t.Helper()
	sr := NewSSEReader(r)
	var out []string
	size := 0
	for {
		ev, err := sr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, size, nil
			}
			return out, size, err
		}
		size += ev.Size
		out = append(out, ev.Type+":"+string(ev.Data))
	}
}

func TestSSEReader(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"one event", "data: {\"a\":1}\n\n", []string{`message:{"a":1}`}},
		{"two events in one read", "data: a\n\ndata: b\n\n", []string{"message:a", "message:b"}},
		{"comments and keep-alive pings are skipped", ": ping\n\n:\n\ndata: a\n: mid-event comment\n\n", []string{"message:a"}},
		{"blank lines between events", "\n\n\ndata: a\n\n\n\ndata: b\n\n", []string{"message:a", "message:b"}},
		{"multi-line data joins with LF", "data: line one\ndata: line two\ndata:\n\n", []string{"message:line one\nline two\n"}},
		{"only one space after the colon goes", "data:  two spaces\ndata:none\n\n", []string{"message: two spaces\nnone"}},
		{"CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"message:a", "message:b"}},
		{"CR line ends", "data: a\r\rdata: b\r\r", []string{"message:a", "message:b"}},
		{"event type, then back to message", "event: error\ndata: boom\n\ndata: ok\n\n", []string{"error:boom", "message:ok"}},
		{"id, retry and unknown fields are ignored", "id: 7\nretry: 100\nfoo: bar\ndata: a\n\n", []string{"message:a"}},
		{"a field without a colon is a name with no value", "data\n\n", []string{"message:"}},
		{"an event without data is not dispatched", "event: ping\n\ndata: a\n\n", []string{"message:a"}},
		{"an unfinished last event is dropped", "data: a\n\ndata: b\n", []string{"message:a"}},
		{"an unfinished last line is dropped", "data: a\n\ndata: b", []string{"message:a"}},
		{"[DONE] is data like any other", "data: {}\n\ndata: [DONE]\n\n", []string{"message:{}", "message:[DONE]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, split := range []struct {
				name string
				r    func() io.Reader
			}{
				{"whole", func() io.Reader { return strings.NewReader(c.in) }},
				{"byte by byte", func() io.Reader { return iotest.OneByteReader(strings.NewReader(c.in)) }},
				{"half reads", func() io.Reader { return iotest.HalfReader(strings.NewReader(c.in)) }},
				{"data with EOF", func() io.Reader { return iotest.DataErrReader(strings.NewReader(c.in)) }},
			} {
				got, _, err := readEvents(t, split.r())
				if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") {
					t.Errorf("%s: got %q, %v; want %q", split.name, got, err, c.want)
				}
			}
		})
	}
}

func TestSSEReaderSizeCountsEveryByte(t *testing.T) {
	in := ": hello\n\ndata: a\r\n\r\nevent: x\ndata: b\n\n"
	_, size, err := readEvents(t, iotest.OneByteReader(strings.NewReader(in)))
	if err != nil || size != len(in) {
		t.Fatalf("size %d, %v; want %d", size, err, len(in))
	}
}

func TestSSEReaderReadErrorAndLongLine(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, _, err := readEvents(t, r)
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Fatalf("got %q, %v; want one event, then %v", got, err, boom)
	}
	long := io.MultiReader(strings.NewReader("data: "), strings.NewReader(strings.Repeat("x", MaxSSELine+10)))
	if _, _, err := readEvents(t, long); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("long line: %v", err)
	}
}

// FuzzSSEReader checks that an event stream reads the same whatever the
// reads it arrives in, and that nothing makes the reader fail other than
// the end of its input.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", ": ping\n\ndata: x\ndata: y\n\n", "data: a\r\n\r\n", "data: a\r\rdata: b\r\r",
		"event: error\ndata: {\"error\":\"x\"}\n\n", "data: [DONE]\n\n", "data\n\n\r\n",
	} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		whole, wsize, err := readEvents(t, strings.NewReader(in))
		if err != nil {
			t.Fatalf("whole: %v", err)
		}
		n := int(step%16) + 1
		chunked, csize, err := readEvents(t, &chunkReader{s: in, n: n})
		if err != nil {
			t.Fatalf("chunked: %v", err)
		}
		if strings.Join(whole, "\x00") != strings.Join(chunked, "\x00") || wsize != csize {
			t.Fatalf("reads of %d bytes: %q (%d bytes) != %q (%d bytes)", n, chunked, csize, whole, wsize)
		}
		if wsize > len(in) {
			t.Fatalf("events of %d bytes from %d", wsize, len(in))
		}
	})
}

// chunkReader hands out s n bytes at a time.
type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}

// BenchmarkSSEChatStream reads a chat completion's stream of 256 token
// chunks and decodes each as the text stream does: the client's cost per
// token.
func BenchmarkSSEChatStream(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"llm","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	for range 256 {
		sb.WriteString(`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"llm","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	sb.WriteString(`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"llm","choices":[],"usage":{"prompt_tokens":550,"completion_tokens":256,"total_tokens":806}}` + "\n\ndata: [DONE]\n\n")
	stream := sb.String()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var ev textEvent
	for b.Loop() {
		sr := NewSSEReader(strings.NewReader(stream))
		tokens := 0
		for {
			e, err := sr.Next()
			if err != nil || string(e.Data) == "[DONE]" {
				break
			}
			ev.reset()
			if err := json.Unmarshal(e.Data, &ev); err != nil {
				b.Fatal(err)
			}
			if ev.token(EndpointChat) {
				tokens++
			}
		}
		if tokens != 256 {
			b.Fatalf("%d tokens", tokens)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/256, "ns/token")
}
