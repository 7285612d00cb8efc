package triton

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/internal/testenv"
)

// heapHeld is the live heap after a collection.
func heapHeld() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestInputDataHeldBounded: an 8 MB file of four million JSON numbers is
// held as its own text (not as four million decoded values, about 30
// times the file), and its tensor is decoded straight from that text.
// Under the race detector, which takes seconds over it, the file is a
// quarter of that.
func TestInputDataHeldBounded(t *testing.T) {
	n := int64(4 << 20)
	if testenv.Race {
		n = 1 << 20
	}
	var b bytes.Buffer
	b.WriteString(`{"data":[{"INPUT0":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('0' + byte(i%10))
	}
	b.WriteString(`]}]}`)
	file := b.Bytes()
	before := heapHeld()
	d, err := ParseInputData(bytes.NewReader(file), "big.json")
	if err != nil {
		t.Fatal(err)
	}
	held := heapHeld() - before
	t.Logf("%d-byte file held as %d bytes (%.2fx)", len(file), held, float64(held)/float64(len(file)))
	if held > 2*uint64(len(file)) {
		t.Errorf("a %d-byte file holds %d bytes after parsing; want at most twice the file", len(file), held)
	}
	iv := d.Sets[0]["INPUT0"]
	if iv.Count != n {
		t.Fatalf("Count = %d; want %d", iv.Count, n)
	}
	before = heapHeld()
	out, err := encodeValues(iv, "INT32", n, "input 'INPUT0'")
	if err != nil {
		t.Fatal(err)
	}
	grown := heapHeld() - before
	if grown > uint64(len(out))+uint64(len(out))/4 {
		t.Errorf("encoding a %d-byte tensor left %d bytes held", len(out), grown)
	}
	for _, i := range []int{0, 1, 9, int(n) - 1} {
		if got := int32(binary.LittleEndian.Uint32(out[4*i:])); got != int32(i%10) {
			t.Fatalf("element %d = %d; want %d", i, got, i%10)
		}
	}
	runtime.KeepAlive(d)
	runtime.KeepAlive(file)
}

// TestInputDataArrays checks the arrays an input's values may be written
// as, and what each decodes to or why it is refused.
func TestInputDataArrays(t *testing.T) {
	for _, c := range []struct {
		name, json, datatype string
		n                    int64
		want                 string // hex of the tensor, or the error's text
	}{
		{"flat INT32", `[1,2]`, "INT32", 2, "0100000002000000"},
		{"nested INT8", `[[1,2],[3,4]]`, "INT8", 4, "01020304"},
		{"deep nesting", `[[[[5]]]]`, "UINT8", 1, "05"},
		{"white space", " [ 1 ,\n 2 ] ", "UINT16", 2, "01000200"},
		{"negative INT16", `[-2]`, "INT16", 1, "feff"},
		{"FP32", `[1.5]`, "FP32", 1, "0000c03f"},
		{"FP64 exponent", `[1e0]`, "FP64", 1, "000000000000f03f"},
		{"BOOL words", `[true,false]`, "BOOL", 2, "0100"},
		{"BOOL digits", `[1,0]`, "BOOL", 2, "0100"},
		{"BYTES strings", `["ab","c"]`, "BYTES", 2, "02000000616201000000" + "63"},
		{"BYTES number", `[12]`, "BYTES", 1, "020000003132"},
		{"BYTES bool", `[true]`, "BYTES", 1, "0400000074727565"},
		{"content form", `{"content":[7],"shape":[1]}`, "INT64", 1, "0700000000000000"},
		{"content nested", `{"content":[[7],[8]],"shape":[2,1]}`, "UINT8", 2, "0708"},
		{"empty array", `[]`, "INT32", 0, ""},
		{"too few", `[1]`, "INT32", 2, "has 1 elements, expected 2"},
		{"too many", `[1,2,3]`, "INT32", 2, "has 3 elements, expected 2"},
		{"string for a number", `["x"]`, "INT32", 1, "element 0: got string"},
		{"out of range INT8", `[300]`, "INT8", 1, "300 is not an INT8"},
		{"fraction for INT32", `[1.5]`, "INT32", 1, "1.5 is not an INT32"},
		{"bool for FP32", `[true]`, "FP32", 1, "got a boolean for a FP32 input"},
		{"BOOL 2", `[2]`, "BOOL", 1, "2 is not a BOOL"},
		{"object inside", `[{"a":1}]`, "INT32", 1, "holds an object"},
		{"null inside", `[null]`, "INT32", 1, "holds null"},
		{"bare number", `7`, "INT32", 1, "expected an array"},
		{"content of a number", `{"content":7}`, "INT32", 1, `"content" must be an array`},
		{"content object without b64", `{"content":{"x":1}}`, "INT32", 1, `"content" must be an array`},
		{"bad shape", `{"content":[1],"shape":"x"}`, "INT32", 1, `"shape" must be an array`},
		{"negative shape", `{"content":[1],"shape":[-1]}`, "INT32", 1, "bad dimension -1"},
		{"neither", `{"values":[1]}`, "INT32", 1, "expected an array"},
		{"b64 not a string", `{"b64":7}`, "INT32", 1, `"b64" must be a base64 string`},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := fmt.Sprintf(`{"data":[{"X":%s}]}`, c.json)
			d, err := ParseInputData(strings.NewReader(doc), "t.json")
			var out []byte
			if err == nil {
				out, err = encodeValues(d.Sets[0]["X"], c.datatype, c.n, "input 'X'")
			}
			if err != nil {
				if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s: error %q; want one line containing %q", c.json, err, c.want)
				}
				return
			}
			if got := fmt.Sprintf("%x", out); got != c.want {
				t.Fatalf("%s as %s: %s; want %s", c.json, c.datatype, got, c.want)
			}
		})
	}
}

// TestWalkArraySyntax refuses malformed arrays with one line.
func TestWalkArraySyntax(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[1,]`, "after a ','"},
		{`[,1]`, "where a value belongs"},
		{`[1 2]`, "where a ',' or ']' belongs"},
		{`[1][2]`, "text after its end"},
		{`[1`, "does not end"},
		{`[01]`, "is not a number"},
		{`[1.]`, "is not a number"},
		{`[-]`, "is not a number"},
		{`[1e]`, "is not a number"},
		{`[nan]`, "is not a number"},
		{`["ab]`, "unterminated string"},
		{`[[1]2]`, "where a ',' or ']' belongs"},
	} {
		_, err := walkArray([]byte(c.in), func(json.Token) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("walkArray(%s) = %v; want one line containing %q", c.in, err, c.want)
		}
	}
	var got []string
	if _, err := walkArray([]byte(`[ "a\"b", "\u00e9", -1.5e+3, [true] ]`), func(tok json.Token) error {
		got = append(got, fmt.Sprint(tok))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := `[a"b é -1.5e+3 true]`; fmt.Sprint(got) != want {
		t.Errorf("elements %v; want %s", got, want)
	}
}

// BenchmarkInputDataArray parses a 1 MiB-element --input-data array and
// decodes it into an INT32 tensor.
func BenchmarkInputDataArray(b *testing.B) {
	const n = 1 << 20
	var buf bytes.Buffer
	buf.WriteString(`{"data":[{"X":[`)
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, "%d", i%1000)
	}
	buf.WriteString(`]}]}`)
	doc := buf.Bytes()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := ParseInputData(bytes.NewReader(doc), "b.json")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := encodeValues(d.Sets[0]["X"], "INT32", n, "X"); err != nil {
			b.Fatal(err)
		}
	}
}
