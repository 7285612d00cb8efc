package triton

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// InputData is a parsed perf_analyzer --input-data JSON file:
//
//	{"data": [
//	  {"INPUT0": [1, 2, 3], "INPUT1": {"content": [4, 5, 6], "shape": [3]}},
//	  {"INPUT0": {"b64": "AQAAAA=="}, "INPUT1": {"content": {"b64": "..."}, "shape": [1]}}
//	]}
//
// Each element of "data" is one data set; the driver rotates through the
// sets. Values are given for one batch item (the batch dimension is left
// out) and are flattened in row-major order, so nested arrays are accepted.
// A "b64" value is the tensor's raw little-endian bytes, except for BYTES
// inputs, where it is a single string element.
type InputData struct {
	// Source names where the data came from, for error messages.
	Source string
	// Sets holds one map per data set, from input name to its values.
	Sets []map[string]InputValues
}

// InputValues are the values of one input in one data set, as written in
// the file.
type InputValues struct {
	// Elements are flattened JSON values (json.Number, string or bool),
	// for values made in memory rather than read from a file; nil when Raw
	// or B64 is set.
	Elements []any
	// Raw is the (nested) JSON array of the values as written in the file,
	// checked when it is read and decoded straight into the tensor's bytes
	// when a request is built, so that no per-element value is ever held;
	// Count is its number of elements. Nil when Elements or B64 is set.
	Raw   []byte
	Count int64
	// B64 is the decoded "b64" content, nil when Elements are given.
	B64 []byte
	// Shape is the "shape" given next to "content", without the batch
	// dimension; nil when the file gives none.
	Shape []int64
}

// MaxInputDataBytes bounds an --input-data file (32 MiB). What a file
// holds is its own JSON text, each input's array kept as written and
// decoded straight into its tensor's bytes, plus those tensors.
const MaxInputDataBytes = 32 << 20

// LoadInputData reads and parses a perf_analyzer --input-data JSON file of
// at most MaxInputDataBytes.
func LoadInputData(path string) (*InputData, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("input data: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxInputDataBytes {
		return nil, fmt.Errorf("input data %s: %d bytes, over the limit of %d (32 MiB): give large tensors as \"b64\" content, or fewer data sets", path, fi.Size(), MaxInputDataBytes)
	}
	d, err := ParseInputData(io.LimitReader(f, MaxInputDataBytes+1), path)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// ParseInputData parses perf_analyzer's --input-data JSON format from r;
// source names the data in error messages.
func ParseInputData(r io.Reader, source string) (*InputData, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("input data %s: not a JSON object: %s", source, textsafe.Excerpt(err.Error(), textsafe.MaxErrorText))
	}
	raw, ok := top["data"]
	if !ok {
		return nil, fmt.Errorf("input data %s: no \"data\" array (expected {\"data\": [{\"INPUT\": [...]}, ...]})", source)
	}
	var sets []json.RawMessage
	if err := unmarshalNumbers(raw, &sets); err != nil {
		return nil, fmt.Errorf("input data %s: \"data\" must be an array of data sets: %s", source, textsafe.Excerpt(err.Error(), textsafe.MaxErrorText))
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("input data %s: \"data\" is empty", source)
	}
	// Each set is its own copy of its text now: let the whole go.
	top, raw = nil, nil
	d := &InputData{Source: source, Sets: make([]map[string]InputValues, 0, len(sets))}
	for i, s := range sets {
		var set map[string]json.RawMessage
		if err := unmarshalNumbers(s, &set); err != nil {
			if bytes.HasPrefix(bytes.TrimSpace(s), []byte("[")) {
				return nil, fmt.Errorf("input data %s: data set %d is an array: sequence (multi-stream) data is not supported", source, i+1)
			}
			return nil, fmt.Errorf("input data %s: data set %d must be an object of inputs: %s", source, i+1, textsafe.Excerpt(err.Error(), textsafe.MaxErrorText))
		}
		sets[i] = nil
		vals := make(map[string]InputValues, len(set))
		for name, v := range set {
			iv, err := parseInputValues(v)
			if err != nil {
				return nil, fmt.Errorf("input data %s: input '%s' in data set %d: %w", source, textsafe.Bound(name), i+1, err)
			}
			vals[name] = iv
		}
		d.Sets = append(d.Sets, vals)
	}
	return d, nil
}

func unmarshalNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// parseInputValues accepts a (nested) array, {"b64": "..."}, or
// {"content": array|{"b64": ...}, "shape": [...]}. An array is checked and
// kept as written (see InputValues.Raw).
func parseInputValues(raw json.RawMessage) (InputValues, error) {
	raw = bytes.TrimSpace(raw)
	const want = "expected an array, {\"b64\": ...} or {\"content\": ..., \"shape\": [...]}"
	if len(raw) > 0 && raw[0] == '[' {
		return rawArray(raw)
	}
	var x map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || unmarshalNumbers(raw, &x) != nil {
		return InputValues{}, errors.New(want)
	}
	if b, ok := x["b64"]; ok {
		dec, err := decodeB64Raw(b)
		return InputValues{B64: dec}, err
	}
	content, ok := x["content"]
	if !ok {
		return InputValues{}, errors.New(want)
	}
	var iv InputValues
	content = bytes.TrimSpace(content)
	switch {
	case len(content) > 0 && content[0] == '[':
		var err error
		if iv, err = rawArray(content); err != nil {
			return InputValues{}, err
		}
	case len(content) > 0 && content[0] == '{':
		var c map[string]json.RawMessage
		if err := unmarshalNumbers(content, &c); err != nil {
			return InputValues{}, fmt.Errorf("\"content\" must be an array or {\"b64\": ...}")
		}
		b, ok := c["b64"]
		if !ok {
			return InputValues{}, fmt.Errorf("\"content\" must be an array or {\"b64\": ...}")
		}
		dec, err := decodeB64Raw(b)
		if err != nil {
			return InputValues{}, err
		}
		iv.B64 = dec
	default:
		return InputValues{}, fmt.Errorf("\"content\" must be an array or {\"b64\": ...}")
	}
	if sh, ok := x["shape"]; ok {
		var v any
		if err := unmarshalNumbers(sh, &v); err != nil {
			return InputValues{}, fmt.Errorf("\"shape\" must be an array of dimensions")
		}
		shape, err := jsonShape(v)
		if err != nil {
			return InputValues{}, err
		}
		iv.Shape = shape
	}
	return iv, nil
}

// rawArray checks a (nested) array of numbers, strings and booleans and
// counts its elements, keeping the text.
func rawArray(raw []byte) (InputValues, error) {
	n, err := walkArray(raw, nil)
	if err != nil {
		return InputValues{}, err
	}
	return InputValues{Raw: raw, Count: n}, nil
}

// walkArray calls fn with each element (json.Number, string or bool) of a
// (nested) JSON array, in row-major order, and returns their number. It
// scans the text itself, one element at a time: nothing per element is
// held, and with a nil fn (checking and counting only) nothing is
// allocated for an element without escapes.
func walkArray(raw []byte, fn func(json.Token) error) (int64, error) {
	var n int64
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return n, errors.New("expected an array")
	}
	depth := 0
	expectValue := true // after '[' or ','
	afterOpen := false
	for i < len(raw) {
		c := raw[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '[':
			if !expectValue {
				return n, fmt.Errorf("bad JSON array: '[' at offset %d where a ',' or ']' belongs", i)
			}
			depth++
			afterOpen = true
			i++
			continue
		case c == ']':
			if expectValue && !afterOpen {
				return n, fmt.Errorf("bad JSON array: ']' at offset %d after a ','", i)
			}
			depth--
			expectValue, afterOpen = false, false
			i++
			if depth == 0 {
				if j := skipSpace(raw, i); j != len(raw) {
					return n, fmt.Errorf("bad JSON array: text after its end at offset %d", j)
				}
				return n, nil
			}
			continue
		case c == ',':
			if expectValue {
				return n, fmt.Errorf("bad JSON array: ',' at offset %d where a value belongs", i)
			}
			expectValue, afterOpen = true, false
			i++
			continue
		}
		if !expectValue {
			return n, fmt.Errorf("bad JSON array: a value at offset %d where a ',' or ']' belongs", i)
		}
		var tok json.Token
		j := i
		switch {
		case c == '{':
			return n, errors.New("an array of values holds an object: give numbers, strings or booleans")
		case c == '"':
			j = i + 1
			escaped := false
			for j < len(raw) && raw[j] != '"' {
				if raw[j] < 0x20 {
					return n, fmt.Errorf("bad JSON array: control character in the string at offset %d", i)
				}
				if raw[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if j >= len(raw) {
				return n, fmt.Errorf("bad JSON array: unterminated string at offset %d", i)
			}
			j++
			if escaped && fn == nil {
				if !json.Valid(raw[i:j]) {
					return n, fmt.Errorf("bad JSON array: bad string at offset %d", i)
				}
			} else if escaped {
				var str string
				if err := json.Unmarshal(raw[i:j], &str); err != nil {
					return n, fmt.Errorf("bad JSON array: string at offset %d: %w", i, err)
				}
				tok = str
			} else if fn != nil {
				tok = string(raw[i+1 : j-1])
			}
		default:
			for j < len(raw) && !endsWord(raw[j]) {
				j++
			}
			word := raw[i:j]
			switch string(word) {
			case "true":
				tok = true
			case "false":
				tok = false
			case "null":
				return n, errors.New("an array of values holds null: give numbers, strings or booleans")
			default:
				if !validNumber(word) {
					return n, fmt.Errorf("bad JSON array: %s at offset %d is not a number", textsafe.Quote(excerpt(word)), i)
				}
				if fn != nil {
					tok = json.Number(word)
				}
			}
		}
		n++
		if fn != nil {
			if err := fn(tok); err != nil {
				return n, err
			}
		}
		i = j
		expectValue, afterOpen = false, false
	}
	return n, errors.New("bad JSON array: it does not end")
}

// endsWord reports whether c ends a number or word in an array.
func endsWord(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', '[', ']', '{', '"':
		return true
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// validNumber reports whether b is a JSON number.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// excerpt is at most 32 bytes of b.
func excerpt(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "..."
	}
	return string(b)
}

// decodeB64Raw decodes a "b64" value as written in the file.
func decodeB64Raw(raw json.RawMessage) ([]byte, error) {
	var v any
	if err := unmarshalNumbers(raw, &v); err != nil {
		return nil, fmt.Errorf("\"b64\" must be a base64 string")
	}
	return decodeB64(v)
}

func decodeB64(v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("\"b64\" must be a base64 string")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("bad base64 in \"b64\": %w", err)
	}
	return b, nil
}

func jsonShape(v any) ([]int64, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("\"shape\" must be an array of dimensions")
	}
	shape := make([]int64, len(arr))
	for i, d := range arr {
		n, ok := d.(json.Number)
		if !ok {
			return nil, fmt.Errorf("\"shape\" must be an array of dimensions")
		}
		x, err := n.Int64()
		if err != nil || x < 0 {
			return nil, fmt.Errorf("bad dimension %s in \"shape\"", textsafe.Bound(string(n)))
		}
		shape[i] = x
	}
	return shape, nil
}

func flatten(arr []any, out []any) []any {
	for _, e := range arr {
		if sub, ok := e.([]any); ok {
			out = flatten(sub, out)
			continue
		}
		out = append(out, e)
	}
	return out
}

// encodeValues turns one batch item's values into Triton's raw form for a
// datatype, checking that there are exactly n elements.
func encodeValues(iv InputValues, datatype string, n int64, where string) ([]byte, error) {
	size := kserve.ElementSize(datatype)
	if iv.B64 != nil {
		if datatype == "BYTES" {
			if n != 1 {
				return nil, fmt.Errorf("%s: b64 content is one BYTES element, expected %d elements", where, n)
			}
			return kserve.EncodeBytes([][]byte{iv.B64}), nil
		}
		if want, ok := mulChecked(n, int64(size)); !ok || int64(len(iv.B64)) != want {
			return nil, fmt.Errorf("%s: b64 content has %d bytes, expected %d (%d %s elements)", where, len(iv.B64), want, n, datatype)
		}
		return iv.B64, nil
	}
	if iv.Raw != nil {
		return encodeRaw(iv, datatype, n, where)
	}
	if int64(len(iv.Elements)) != n {
		return nil, fmt.Errorf("%s has %d elements, expected %d", where, len(iv.Elements), n)
	}
	if datatype == "BYTES" {
		elems := make([][]byte, len(iv.Elements))
		for i, e := range iv.Elements {
			switch x := e.(type) {
			case string:
				elems[i] = []byte(x)
			case json.Number:
				elems[i] = []byte(x.String())
			case bool:
				elems[i] = []byte(strconv.FormatBool(x))
			default:
				return nil, fmt.Errorf("%s: element %d is not a string", where, i)
			}
		}
		return kserve.EncodeBytes(elems), nil
	}
	out := make([]byte, 0, int(n)*size)
	for i, e := range iv.Elements {
		var err error
		out, err = appendElement(out, e, datatype)
		if err != nil {
			return nil, fmt.Errorf("%s: element %d: %w", where, i, err)
		}
	}
	return out, nil
}

// encodeRaw decodes a file's array straight into Triton's raw form, one
// element at a time.
func encodeRaw(iv InputValues, datatype string, n int64, where string) ([]byte, error) {
	if iv.Count != n {
		return nil, fmt.Errorf("%s has %d elements, expected %d", where, iv.Count, n)
	}
	var out []byte
	if datatype != "BYTES" {
		out = make([]byte, 0, int(n)*kserve.ElementSize(datatype))
	}
	i := 0
	_, err := walkArray(iv.Raw, func(e json.Token) error {
		var err error
		if datatype == "BYTES" {
			switch x := e.(type) {
			case string:
				out = kserve.AppendBytesElement(out, []byte(x))
			case json.Number:
				out = kserve.AppendBytesElement(out, []byte(x.String()))
			case bool:
				out = kserve.AppendBytesElement(out, []byte(strconv.FormatBool(x)))
			}
		} else if out, err = appendElement(out, e, datatype); err != nil {
			return fmt.Errorf("%s: element %d: %w", where, i, err)
		}
		i++
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func appendElement(out []byte, e any, datatype string) ([]byte, error) {
	le := binary.LittleEndian
	if b, ok := e.(bool); ok {
		if datatype != "BOOL" {
			return nil, fmt.Errorf("got a boolean for a %s input", datatype)
		}
		if b {
			return append(out, 1), nil
		}
		return append(out, 0), nil
	}
	num, ok := e.(json.Number)
	if !ok {
		return nil, fmt.Errorf("got %T, expected a number for a %s input", e, datatype)
	}
	s := num.String()
	switch datatype {
	case "BOOL":
		v, err := strconv.ParseUint(s, 10, 1)
		if err != nil {
			return nil, fmt.Errorf("%s is not a BOOL (true, false, 0 or 1)", s)
		}
		return append(out, byte(v)), nil
	case "INT8", "INT16", "INT32", "INT64":
		bits := 8 * kserve.ElementSize(datatype)
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("%s is not an %s", s, datatype)
		}
		return appendUint(out, uint64(v), bits/8), nil
	case "UINT8", "UINT16", "UINT32", "UINT64":
		bits := 8 * kserve.ElementSize(datatype)
		v, err := strconv.ParseUint(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("%s is not a %s", s, datatype)
		}
		return appendUint(out, v, bits/8), nil
	case "FP32":
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return nil, fmt.Errorf("%s is not an FP32", s)
		}
		return le.AppendUint32(out, math.Float32bits(float32(v))), nil
	case "FP64":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is not an FP64", s)
		}
		return le.AppendUint64(out, math.Float64bits(v)), nil
	case "FP16":
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return nil, fmt.Errorf("%s is not an FP16", s)
		}
		return le.AppendUint16(out, float32ToFP16(float32(v))), nil
	case "BF16":
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return nil, fmt.Errorf("%s is not a BF16", s)
		}
		return le.AppendUint16(out, uint16(math.Float32bits(float32(v))>>16)), nil
	}
	return nil, fmt.Errorf("unsupported datatype %s", datatype)
}

func appendUint(out []byte, v uint64, size int) []byte {
	for i := 0; i < size; i++ {
		out = append(out, byte(v>>(8*i)))
	}
	return out
}

// float32ToFP16 converts to IEEE half precision, rounding toward zero, with
// overflow to infinity; precise enough for test inputs.
func float32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case (b>>23)&0xff == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		return sign | uint16(mant>>uint(14-exp))
	}
	return sign | uint16(exp)<<10 | uint16(mant>>13)
}
