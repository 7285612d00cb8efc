package triton

import (
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzWalkArray checks the array scanner against encoding/json: whatever
// it accepts is valid JSON, and it yields the same elements, in the same
// order, as decoding the array into values and flattening them; an array
// of scalars that encoding/json accepts is accepted too.
func FuzzWalkArray(f *testing.F) {
	for _, s := range []string{`[1,2]`, `[[1],[2,3]]`, `["a\"b",true,false]`, `[1e5,-0.5]`, `[]`, `[[]]`, `[null]`, `[{}]`, `[1,]`, `[01]`, ` [ 1 ] `, `["\u00e9"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got []string
		_, err := walkArray(b, func(tok json.Token) error {
			got = append(got, fmt.Sprintf("%T:%v", tok, tok))
			return nil
		})
		if n, cerr := walkArray(b, nil); (cerr == nil) != (err == nil) || err == nil && n != int64(len(got)) {
			t.Fatalf("walkArray(%q) counting: %d, %v; with elements: %d, %v", b, n, cerr, len(got), err)
		}
		var v any
		jerr := unmarshalNumbers(b, &v)
		if jerr == nil && !json.Valid(b) {
			jerr = fmt.Errorf("not one JSON value")
		}
		arr, isArr := v.([]any)
		if err != nil {
			if jerr == nil && isArr && scalarsOnly(arr) {
				t.Fatalf("walkArray refused %q, which encoding/json accepts: %v", b, err)
			}
			return
		}
		if jerr != nil || !isArr {
			t.Fatalf("walkArray accepted %q, which is not a JSON array (%v)", b, jerr)
		}
		var want []string
		for _, e := range flatten(arr, nil) {
			want = append(want, fmt.Sprintf("%T:%v", e, e))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("walkArray(%q) = %v; encoding/json gives %v", b, got, want)
		}
	})
}

// scalarsOnly reports whether a nested array holds only numbers, strings
// and booleans.
func scalarsOnly(arr []any) bool {
	for _, e := range arr {
		switch x := e.(type) {
		case []any:
			if !scalarsOnly(x) {
				return false
			}
		case json.Number, string, bool:
		default:
			return false
		}
	}
	return true
}
