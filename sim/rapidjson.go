package sim

import (
	"strconv"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/triton/kserve"
)

// Triton's HTTP frontend parses request bodies with rapidjson's iterative
// parser (NaN and infinity allowed) and answers a body that does not parse
// with rapidjson's words and the offset it stopped at: "failed to parse the
// request JSON buffer: Invalid value. at 9". checkJSON is that parser's
// grammar and its errors, without building anything: one pass over the
// bytes, no allocation unless the body is bad.

// rapidjson's parse errors (GetParseError_En).
const (
	jsonDocumentEmpty  = "The document is empty."
	jsonRootNotSingle  = "The document root must not be followed by other values."
	jsonValueInvalid   = "Invalid value."
	jsonMissName       = "Missing a name for object member."
	jsonMissColon      = "Missing a colon after a name of object member."
	jsonMissCommaCurly = "Missing a comma or '}' after an object member."
	jsonMissCommaArray = "Missing a comma or ']' after an array element."
	jsonBadHex         = "Incorrect hex digit after \\u escape in string."
	jsonBadSurrogate   = "The surrogate pair in string is invalid."
	jsonBadEscape      = "Invalid escape character in string."
	jsonMissQuote      = "Missing a closing quotation mark in string."
	jsonBadEncoding    = "Invalid encoding in string."
	jsonMissFraction   = "Miss fraction part in number."
	jsonMissExponent   = "Miss exponent in number."
)

// jsonSyntaxError is a body rapidjson would not parse: what and where.
type jsonSyntaxError struct {
	msg string
	off int
}

func (e *jsonSyntaxError) Error() string { return e.msg + " at " + strconv.Itoa(e.off) }

// errJSONBody is Triton's answer to a body that does not parse.
func errJSONBody(e *jsonSyntaxError) error {
	return &kserve.Error{Code: codes.Internal, Message: "failed to parse the request JSON buffer: " + e.Error()}
}

// parseBody checks a request body as Triton's HTTP frontend parses it;
// the error is Triton's answer. The document aliases b; what checking it
// holds (a byte per level of nesting) is reserved in hold first.
func parseBody(b []byte, hold *budgetHold) (jval, error) {
	depth := jsonDepth(b)
	if err := hold.grow(int64(depth)); err != nil {
		return jval{}, err
	}
	if e := checkJSON(b, depth); e != nil {
		return jval{}, errJSONBody(e)
	}
	return jval{b: trimJSONSpace(b)}, nil
}

// jsonDepth is the deepest nesting of arrays and objects in b, strings
// skipped, in one pass that allocates nothing: the room checkJSON's stack
// takes (on bad JSON, at least what it takes up to the error).
func jsonDepth(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > deepest {
				deepest = depth
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// The states of rapidjson's iterative parser that decide its errors.
const (
	jsStart = iota
	jsObjectInitial
	jsMemberKey
	jsKeyValueDelimiter
	jsMemberValue
	jsMemberDelimiter
	jsArrayInitial
	jsElement
	jsElementDelimiter
	jsFinish
)

// checkJSON reports where rapidjson's iterative parser would stop on b,
// or nil when b is one JSON value; depth is the room to make for its
// stack (jsonDepth).
func checkJSON(b []byte, depth int) *jsonSyntaxError {
	stack := make([]uint8, 0, depth) // the state to return to when a container closes
	state := jsStart
	i := skipJSONSpace(b, 0)
	for i < len(b) && b[i] != 0 {
		c := b[i]
		var err *jsonSyntaxError
		next := -1
		switch {
		case c == '{' || c == '[':
			switch state {
			case jsStart, jsKeyValueDelimiter, jsArrayInitial, jsElementDelimiter:
				ret := state
				switch state {
				case jsArrayInitial, jsElementDelimiter:
					ret = jsElement
				case jsKeyValueDelimiter:
					ret = jsMemberValue
				}
				stack = append(stack, uint8(ret))
				i++
				next = jsObjectInitial
				if c == '[' {
					next = jsArrayInitial
				}
			}
		case c == '}':
			switch state {
			case jsObjectInitial, jsMemberValue:
				next, stack = popJSONState(stack)
				i++
			case jsMemberDelimiter:
				err = &jsonSyntaxError{jsonMissName, i}
			}
		case c == ']':
			switch state {
			case jsArrayInitial, jsElement:
				next, stack = popJSONState(stack)
				i++
			case jsElementDelimiter:
				err = &jsonSyntaxError{jsonValueInvalid, i}
			}
		case c == ',':
			switch state {
			case jsMemberValue:
				next, i = jsMemberDelimiter, i+1
			case jsElement:
				next, i = jsElementDelimiter, i+1
			}
		case c == ':':
			if state == jsMemberKey {
				next, i = jsKeyValueDelimiter, i+1
			}
		case c == '"' && (state == jsObjectInitial || state == jsMemberDelimiter):
			i, err = scanJSONString(b, i)
			next = jsMemberKey
		default: // a scalar value: string, literal or number
			switch state {
			case jsStart:
				next = jsFinish
			case jsKeyValueDelimiter:
				next = jsMemberValue
			case jsArrayInitial, jsElementDelimiter:
				next = jsElement
			}
			if next >= 0 {
				i, err = scanJSONScalar(b, i)
			}
		}
		if err != nil {
			return err
		}
		if next < 0 {
			return stateError(state, i)
		}
		state = next
		i = skipJSONSpace(b, i)
	}
	if state != jsFinish {
		return stateError(state, i)
	}
	return nil
}

// popJSONState is the state after a container closes.
func popJSONState(stack []uint8) (int, []uint8) {
	n := int(stack[len(stack)-1])
	stack = stack[:len(stack)-1]
	if n == jsStart {
		n = jsFinish
	}
	return n, stack
}

// stateError is rapidjson's HandleError: the error of a token a state
// does not take, or of the input's end.
func stateError(state, off int) *jsonSyntaxError {
	msg := jsonMissCommaArray
	switch state {
	case jsStart:
		msg = jsonDocumentEmpty
	case jsFinish:
		msg = jsonRootNotSingle
	case jsObjectInitial, jsMemberDelimiter:
		msg = jsonMissName
	case jsMemberKey:
		msg = jsonMissColon
	case jsMemberValue:
		msg = jsonMissCommaCurly
	case jsKeyValueDelimiter, jsArrayInitial, jsElementDelimiter:
		msg = jsonValueInvalid
	}
	return &jsonSyntaxError{msg, off}
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

func trimJSONSpace(b []byte) []byte {
	b = b[skipJSONSpace(b, 0):]
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// at is b[i], or 0 past its end (rapidjson's stream ends in '\0').
func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// scanJSONScalar scans the string, literal or number at b[i].
func scanJSONScalar(b []byte, i int) (int, *jsonSyntaxError) {
	switch b[i] {
	case '"':
		return scanJSONString(b, i)
	case 'n':
		return scanJSONLiteral(b, i, "null")
	case 't':
		return scanJSONLiteral(b, i, "true")
	case 'f':
		return scanJSONLiteral(b, i, "false")
	}
	return scanJSONNumber(b, i)
}

func scanJSONLiteral(b []byte, i int, word string) (int, *jsonSyntaxError) {
	for k := 1; k < len(word); k++ {
		if at(b, i+k) != word[k] {
			return 0, &jsonSyntaxError{jsonValueInvalid, i + k}
		}
	}
	return i + len(word), nil
}

// scanJSONString scans the string whose quote is at b[i].
func scanJSONString(b []byte, i int) (int, *jsonSyntaxError) {
	for i++; ; {
		c := at(b, i)
		switch {
		case c == '\\':
			esc := i
			switch at(b, i+1) {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				cp, ok := jsonHex4(b, i+2)
				if !ok {
					return 0, &jsonSyntaxError{jsonBadHex, esc}
				}
				i += 6
				if cp >= 0xD800 && cp <= 0xDFFF {
					if cp > 0xDBFF || at(b, i) != '\\' || at(b, i+1) != 'u' {
						return 0, &jsonSyntaxError{jsonBadSurrogate, esc}
					}
					cp2, ok := jsonHex4(b, i+2)
					if !ok {
						return 0, &jsonSyntaxError{jsonBadHex, esc}
					}
					if cp2 < 0xDC00 || cp2 > 0xDFFF {
						return 0, &jsonSyntaxError{jsonBadSurrogate, esc}
					}
					i += 6
				}
			default:
				return 0, &jsonSyntaxError{jsonBadEscape, esc}
			}
		case c == '"':
			return i + 1, nil
		case c == 0:
			return 0, &jsonSyntaxError{jsonMissQuote, i}
		case c < 0x20:
			return 0, &jsonSyntaxError{jsonBadEncoding, i}
		default:
			i++
		}
	}
}

func jsonHex4(b []byte, i int) (rune, bool) {
	var cp rune
	for k := range 4 {
		c := at(b, i+k)
		switch {
		case c >= '0' && c <= '9':
			cp = cp<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			cp = cp<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			cp = cp<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return cp, true
}

// scanJSONNumber scans a number as rapidjson's ParseNumber does, NaN and
// Infinity included.
func scanJSONNumber(b []byte, i int) (int, *jsonSyntaxError) {
	if at(b, i) == '-' {
		i++
	}
	switch c := at(b, i); {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		for i++; at(b, i) >= '0' && at(b, i) <= '9'; i++ {
		}
	case c == 'N':
		if at(b, i+1) == 'a' && at(b, i+2) == 'N' {
			return i + 3, nil
		}
		return 0, &jsonSyntaxError{jsonValueInvalid, i + 1 + boolInt(at(b, i+1) == 'a')}
	case c == 'I':
		if at(b, i+1) != 'n' || at(b, i+2) != 'f' {
			return 0, &jsonSyntaxError{jsonValueInvalid, i + 1 + boolInt(at(b, i+1) == 'n')}
		}
		i += 3
		if at(b, i) == 'i' {
			for _, w := range []byte("inity") {
				if at(b, i) != w {
					return 0, &jsonSyntaxError{jsonValueInvalid, i}
				}
				i++
			}
		}
		return i, nil
	default:
		return 0, &jsonSyntaxError{jsonValueInvalid, i}
	}
	if at(b, i) == '.' {
		i++
		if c := at(b, i); c < '0' || c > '9' {
			return 0, &jsonSyntaxError{jsonMissFraction, i}
		}
		for at(b, i) >= '0' && at(b, i) <= '9' {
			i++
		}
	}
	if c := at(b, i); c == 'e' || c == 'E' {
		i++
		if c := at(b, i); c == '+' || c == '-' {
			i++
		}
		if c := at(b, i); c < '0' || c > '9' {
			return 0, &jsonSyntaxError{jsonMissExponent, i}
		}
		for at(b, i) >= '0' && at(b, i) <= '9' {
			i++
		}
	}
	return i, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
