package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
)

// jval is one value of a JSON document checkJSON accepted, as its bytes:
// what Triton's HTTP frontend reads with TritonJson, read the same way
// (members in the document's order, the first of a repeated name,
// rapidjson's number kinds) and failing with TritonJson's messages,
// without decoding what is not asked for.
type jval struct{ b []byte }

// The kinds of JSON values, by their first byte.
func (v jval) isObject() bool { return len(v.b) > 0 && v.b[0] == '{' }
func (v jval) isArray() bool  { return len(v.b) > 0 && v.b[0] == '[' }
func (v jval) isString() bool { return len(v.b) > 0 && v.b[0] == '"' }
func (v jval) isBool() bool   { return len(v.b) > 0 && (v.b[0] == 't' || v.b[0] == 'f') }
func (v jval) isNull() bool   { return len(v.b) > 0 && v.b[0] == 'n' }
func (v jval) isNumber() bool {
	return len(v.b) > 0 && (v.b[0] == '-' || v.b[0] >= '0' && v.b[0] <= '9' || v.b[0] == 'N' || v.b[0] == 'I')
}

// tjError is a TritonJson error: INTERNAL (HTTP 500), as Triton's HTTP
// frontend makes them.
func tjError(msg string) error { return &kserve.Error{Code: codes.Internal, Message: msg} }

// withPrefix is Triton's RETURN_MSG_IF_ERR: the same code, the message
// after prefix and ": ".
func withPrefix(prefix string, err error) error {
	if e, ok := err.(*kserve.Error); ok {
		return &kserve.Error{Code: e.Code, Message: prefix + ": " + e.Message}
	}
	return err
}

// TritonJson's messages.
const (
	tjNotString = "attempt to access JSON non-string as string"
	tjNotBool   = "attempt to access JSON non-boolean as boolean"
	tjNotInt    = "attempt to access JSON non-signed-integer as signed-integer"
	tjNotUint   = "attempt to access JSON non-unsigned-integer as unsigned-integer"
	tjNotNumber = "attempt to access JSON non-number as double"
	tjNotArray  = "attempt to access JSON non-array as array"
	tjNotObject = "attempt to get members for non-object"
)

func tjNoMember(name string) error {
	return tjError("attempt to access non-existing object member '" + name + "'")
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && !bytes.ContainsRune([]byte(" \t\r\n,]}:"), rune(b[i])) {
		i++
	}
	return i
}

// each calls f with each member (object) or element (array, key "") in
// order until f returns false.
func (v jval) each(f func(key jval, val jval) bool) {
	if !v.isObject() && !v.isArray() {
		return
	}
	b := v.b
	obj := v.isObject()
	for i := skipJSONSpace(b, 1); i < len(b) && b[i] != '}' && b[i] != ']'; {
		var key jval
		if obj {
			end := skipValue(b, i)
			key = jval{b[i:end]}
			i = skipJSONSpace(b, end)
			i = skipJSONSpace(b, i+1) // ':'
		}
		end := skipValue(b, i)
		if !f(key, jval{b[i:end]}) {
			return
		}
		i = skipJSONSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipJSONSpace(b, i+1)
		}
	}
}

// find is the first member named name of an object (rapidjson's
// FindMember).
func (v jval) find(name string) (jval, bool) {
	var out jval
	found := false
	v.each(func(k, val jval) bool {
		if k.equals(name) {
			out, found = val, true
			return false
		}
		return true
	})
	return out, found
}

// has reports whether an object has a member named name.
func (v jval) has(name string) bool {
	_, ok := v.find(name)
	return ok
}

// equals reports whether a JSON string is s.
func (v jval) equals(s string) bool {
	if len(v.b) == len(s)+2 && bytes.IndexByte(v.b, '\\') < 0 {
		return string(v.b[1:len(v.b)-1]) == s
	}
	str, ok := v.asString()
	return ok && str == s
}

// asString is a JSON string's value.
func (v jval) asString() (string, bool) {
	if !v.isString() {
		return "", false
	}
	if bytes.IndexByte(v.b, '\\') < 0 {
		return string(v.b[1 : len(v.b)-1]), true
	}
	var s string
	if err := json.Unmarshal(v.b, &s); err != nil {
		return "", false
	}
	return s, true
}

// stringLen is the length of a JSON string's value, without making it
// when it has no escapes.
func (v jval) stringLen() (int, bool) {
	if !v.isString() {
		return 0, false
	}
	if bytes.IndexByte(v.b, '\\') < 0 {
		return len(v.b) - 2, true
	}
	s, ok := v.asString()
	return len(s), ok
}

func (v jval) asBool() (bool, bool) {
	if !v.isBool() {
		return false, false
	}
	return v.b[0] == 't', true
}

// isInteger reports whether a number is written as rapidjson stores an
// integer: no fraction, no exponent.
func (v jval) isInteger() bool {
	if !v.isNumber() {
		return false
	}
	return bytes.IndexAny(v.b, ".eEIN") < 0
}

// asUint is rapidjson's GetUint64 where IsUint64: an integer in 0..2^64-1
// ("-0" too).
func (v jval) asUint() (uint64, bool) {
	if !v.isInteger() {
		return 0, false
	}
	s := string(v.b)
	if s == "-0" {
		return 0, true
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// asInt is rapidjson's GetInt64 where IsInt64: an integer in int64's
// range.
func (v jval) asInt() (int64, bool) {
	if !v.isInteger() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v.b), 10, 64)
	return n, err == nil
}

// asDouble is rapidjson's GetDouble where IsNumber.
func (v jval) asDouble() (float64, bool) {
	if !v.isNumber() {
		return 0, false
	}
	s := string(v.b)
	switch s {
	case "NaN", "-NaN":
		return math.NaN(), true
	case "Inf", "Infinity":
		return math.Inf(1), true
	case "-Inf", "-Infinity":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// TritonJson's member accessors: a missing member or one of another kind
// fails with its message.

func (v jval) memberArray(name string) (jval, error) {
	m, ok := v.find(name)
	if !ok {
		return jval{}, tjNoMember(name)
	}
	if !m.isArray() {
		return jval{}, tjError(tjNotArray)
	}
	return m, nil
}

func (v jval) memberString(name string) (string, error) {
	m, ok := v.find(name)
	if !ok {
		return "", tjNoMember(name)
	}
	s, ok := m.asString()
	if !ok {
		return "", tjError(tjNotString)
	}
	return s, nil
}

func (v jval) memberBool(name string) (bool, error) {
	m, ok := v.find(name)
	if !ok {
		return false, tjNoMember(name)
	}
	b, ok := m.asBool()
	if !ok {
		return false, tjError(tjNotBool)
	}
	return b, nil
}

func (v jval) memberUint(name string) (uint64, error) {
	m, ok := v.find(name)
	if !ok {
		return 0, tjNoMember(name)
	}
	n, ok := m.asUint()
	if !ok {
		return 0, tjError(tjNotUint)
	}
	return n, nil
}

// stringOr is v as a string, or TritonJson's error.
func (v jval) stringOr() (string, error) {
	s, ok := v.asString()
	if !ok {
		return "", tjError(tjNotString)
	}
	return s, nil
}

// uintOr is v as an unsigned integer, or TritonJson's error.
func (v jval) uintOr() (uint64, error) {
	n, ok := v.asUint()
	if !ok {
		return 0, tjError(tjNotUint)
	}
	return n, nil
}

// boolOr is v as a boolean, or TritonJson's error.
func (v jval) boolOr() (bool, error) {
	b, ok := v.asBool()
	if !ok {
		return false, tjError(tjNotBool)
	}
	return b, nil
}
