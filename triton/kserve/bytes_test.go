package kserve

import (
	"bytes"
	"testing"
)

func TestAppendBytesElementFraming(t *testing.T) {
	// "ab" then "" then "xyz", each after its little-endian uint32 length.
	want := []byte("\x02\x00\x00\x00ab\x00\x00\x00\x00\x03\x00\x00\x00xyz")
	var b []byte
	b = AppendBytesElement(b, "ab")
	b = AppendBytesElement(b, []byte{})
	b = AppendBytesElement(b, []byte("xyz"))
	if !bytes.Equal(b, want) {
		t.Fatalf("framed = %q, want %q", b, want)
	}
	if !bytes.Equal(EncodeBytes([][]byte{[]byte("ab"), {}, []byte("xyz")}), want) {
		t.Error("EncodeBytes frames differently from AppendBytesElement")
	}
}

func TestBytesLength(t *testing.T) {
	cases := []struct {
		in   []byte
		n    int64
		ok   bool
		note string
	}{
		{[]byte("\x05\x00\x00\x00hello"), 5, true, "prefix then data"},
		{[]byte("\x05\x00\x00\x00he"), 5, true, "declared length beyond the data is still read"},
		{[]byte("\xff\xff\xff\xff"), 1<<32 - 1, true, "largest length, unsigned"},
		{[]byte("\x05\x00\x00"), 0, false, "3 bytes: no whole prefix"},
		{nil, 0, false, "empty"},
	}
	for _, c := range cases {
		if n, ok := BytesLength(c.in); n != c.n || ok != c.ok {
			t.Errorf("%s: BytesLength(%q) = %d, %v; want %d, %v", c.note, c.in, n, ok, c.n, c.ok)
		}
	}
	if got := AppendBytesLength(nil, 258); !bytes.Equal(got, []byte{2, 1, 0, 0}) {
		t.Errorf("AppendBytesLength(258) = %v", got)
	}
}
