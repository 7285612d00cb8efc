package sim

// Decoded JSON can take far more memory than its text: "{}," is three
// bytes and, as an infer request's input, a struct of a hundred bytes
// twice over (the decoded body and the request built from it); "1," in a
// map[string]any is an interface in a map slot. So before a JSON body is
// decoded, jsonCounts counts its values in one pass that allocates
// nothing, and the budget reserves a cost per value.

// Costs of decoding JSON, per byte of text and per value.
const (
	// jsonTextCopies: encoding/json's decoder buffers the text, growing
	// its buffer by doubling to up to twice the text (the old buffers are
	// garbage: up to five times the text in all, measured by
	// TestJSONRequestCostBoundsAllocation), and a json.RawMessage copies
	// its bytes.
	jsonTextCopies = 6
	// jsonValueCost bounds what one JSON value (or object key) becomes:
	// the largest is an infer input's struct, once decoded and once as the
	// protobuf request built from it, with slices grown by doubling
	// (measured: 570 bytes per "{}" input, TestJSONRequestCostBoundsAllocation).
	jsonValueCost = 640
	// jsonRequestBase is a request's own structures, whatever its size.
	jsonRequestBase = 64 << 10
)

// jsonValuesCost is what decoding body into Go values may hold.
func jsonValuesCost(body []byte) int64 {
	values, _ := jsonCounts(body, false)
	return jsonRequestBase + jsonTextCopies*int64(len(body)) + jsonValueCost*values
}

// jsonDocCost is what an infer request's JSON part may hold once read in
// place (parseBody, jval): the request built from its values, and the
// strings copied out of its text (at most the text outside "data" arrays);
// each tensor's data is reserved as it is decoded, and the text itself
// with the body.
func jsonDocCost(body []byte) int64 {
	values, dataBytes := jsonCounts(body, true)
	return jsonRequestBase + int64(len(body)) - dataBytes + jsonValueCost*values
}

// jsonCounts counts the values and object keys of a JSON text; with
// skipData, an array that is the value of a "data" key counts as one value
// and its bytes are returned apart. It does not check the text: on bad
// JSON it counts what it can (decoding then fails).
func jsonCounts(b []byte, skipData bool) (values, dataBytes int64) {
	keyIsData, afterDataKey := false, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			afterDataKey, keyIsData = keyIsData, false
			continue
		case '"':
			start := i + 1
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			values++
			keyIsData, afterDataKey = i < len(b) && string(b[start:i]) == "data", false
			continue
		case '[':
			values++
			if skipData && afterDataKey {
				end := skipArray(b, i)
				dataBytes += int64(end - i)
				i = end - 1
			}
		case '{':
			values++
		case ',', ']', '}':
		default:
			values++
			for i+1 < len(b) && !isJSONDelim(b[i+1]) {
				i++ // the rest of a number or literal
			}
		}
		keyIsData, afterDataKey = false, false
	}
	return values, dataBytes
}

func isJSONDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '[', ']', '{', '}', '"':
		return true
	}
	return false
}

// skipArray returns the index just past the array that starts at b[i].
func skipArray(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return len(b)
}
