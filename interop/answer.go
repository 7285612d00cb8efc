package interop

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// An Answer is one server's answer to one request of a differential test,
// reduced to what is compared between two servers: a tree of JSON values
// (map[string]any, []any, string, json.Number, bool, nil) with these keys
// at its root:
//
//   - "status": "HTTP 400", or the gRPC code's name ("InvalidArgument",
//     "OK");
//   - "message": the gRPC status message;
//   - "header": HTTP's Content-Type and Inference-Header-Content-Length;
//   - "body": the HTTP body as decoded JSON (the JSON header of a
//     binary-tensor response), the gRPC response message as protojson
//     with the proto's field names (fields at their default values are
//     absent, as on the wire);
//   - "binary": the bytes after a binary-tensor response's JSON header, in
//     hexadecimal; "text": a body that is not JSON, as it is;
//   - "responses": the messages of a gRPC stream, in order, each as a
//     "body".
//
// Keys that would be empty are left out.
type Answer map[string]any

// Timing keys: their values differ between any two runs, so Compare
// masks them (see Compare).
var timingKeys = map[string]bool{
	"ns":             true, // StatisticDuration's nanoseconds
	"last_inference": true, // ms since the epoch
	"timestamp":      true,
	"timestamps":     true,
}

// Masked is what a masked value is replaced with.
const Masked = "<masked>"

// Compare lists the differences between two answers, a (the real
// server's) and b (the other's), one line each, by path from the root
// ("body.model_stats[0].inference_count: 3 != 4"); none means they agree.
//
// Masking rules, the only ones:
//
//   - a value under a timing key (ns, last_inference, timestamp,
//     timestamps) is compared only for its presence and its JSON kind;
//   - nothing else is masked: status, message, headers, field sets, field
//     values, list lengths and orders, numbers as written (1 and 1.0
//     differ), and the bytes of binary tensors must be equal.
//
// Object keys are compared as sets (JSON objects are unordered; so are
// protobuf maps).
func Compare(a, b Answer) []string {
	var out []string
	diffValue(&out, "", map[string]any(a), map[string]any(b))
	return out
}

func diffValue(out *[]string, path string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: %s != %s", orRoot(path), show(a), show(b)))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := join(path, k)
			v, ok := y[k]
			switch {
			case !ok:
				*out = append(*out, fmt.Sprintf("%s: %s != (absent)", p, show(x[k])))
			case timingKeys[k]:
				if kind(x[k]) != kind(v) {
					*out = append(*out, fmt.Sprintf("%s: a %s != a %s (timing, masked)", p, kind(x[k]), kind(v)))
				}
			default:
				diffValue(out, p, x[k], v)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(y)) {
			if _, ok := x[k]; !ok {
				*out = append(*out, fmt.Sprintf("%s: (absent) != %s", join(path, k), show(y[k])))
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, fmt.Sprintf("%s: %s != %s", orRoot(path), show(a), show(b)))
			return
		}
		for i := range x {
			diffValue(out, fmt.Sprintf("%s[%d]", path, i), x[i], y[i])
		}
	default:
		if fmt.Sprintf("%T %v", a, a) != fmt.Sprintf("%T %v", b, b) {
			*out = append(*out, fmt.Sprintf("%s: %s != %s", orRoot(path), show(a), show(b)))
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(answer)"
	}
	return path
}

// kind names a JSON value's kind.
func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "list"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// show writes a value for a difference's line, cut to 300 bytes.
func show(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		s = "null"
	case json.Number:
		s = string(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(b)
		}
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// decodeJSON decodes b into a JSON tree, numbers as written.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// httpAnswer reduces an HTTP answer: its status, the compared headers and
// its body (split at Inference-Header-Content-Length when set).
func httpAnswer(status int, contentType, headerLen string, body []byte) Answer {
	a := Answer{"status": "HTTP " + strconv.Itoa(status)}
	h := map[string]any{}
	if contentType != "" {
		h["Content-Type"] = contentType
	}
	if headerLen != "" {
		h["Inference-Header-Content-Length"] = headerLen
	}
	if len(h) > 0 {
		a["header"] = h
	}
	jsonPart, tail := body, []byte(nil)
	if n, err := strconv.Atoi(headerLen); err == nil && n >= 0 && n <= len(body) {
		jsonPart, tail = body[:n], body[n:]
	}
	if len(tail) > 0 {
		a["binary"] = hex.EncodeToString(tail)
	}
	if len(bytes.TrimSpace(jsonPart)) == 0 {
		return a
	}
	if v, err := decodeJSON(jsonPart); err == nil {
		a["body"] = v
	} else {
		a["text"] = strings.ToValidUTF8(string(jsonPart), "\uFFFD")
	}
	return a
}
