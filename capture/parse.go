package capture

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tritontop/tritontop/trace"
	"github.com/tritontop/tritontop/triton/pb"
)

// rawInputContents is ModelInferRequest's raw_input_contents field.
const rawInputContents = 7

// ParseRequest reads an encoded ModelInferRequest as a trace records it
// (see RequestOf) without decoding or copying its raw tensor contents,
// which are most of its bytes: only their sizes are read, and the contents
// are copied only when tensors is set. b is not retained.
func ParseRequest(b []byte, tensors bool) (trace.Request, error) {
	var rest []byte // every field but the raw contents
	var sizes []int
	var data [][]byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return trace.Request{}, fmt.Errorf("capture: bad request: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return trace.Request{}, fmt.Errorf("capture: bad request: %w", protowire.ParseError(m))
		}
		if num == rawInputContents && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			sizes = append(sizes, len(v))
			if tensors {
				data = append(data, append([]byte(nil), v...))
			}
		} else {
			rest = append(rest, b[:n+m]...)
		}
		b = b[n+m:]
	}
	var msg pb.ModelInferRequest
	if err := proto.Unmarshal(rest, &msg); err != nil {
		return trace.Request{}, fmt.Errorf("capture: bad request: %w", err)
	}
	r := RequestOf(&msg, false)
	if len(sizes) > 0 && len(sizes) != len(r.Inputs) {
		return r, errors.New("capture: a request's raw contents do not match its inputs")
	}
	for i := range sizes {
		r.Inputs[i].Bytes = int64(sizes[i])
		if tensors {
			r.Inputs[i].Data = data[i]
		}
	}
	return r, nil
}
