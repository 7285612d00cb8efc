package kserve

import (
	"encoding/binary"
	"fmt"
)

// BytesLengthSize is the size of the length that precedes every element of
// serialized BYTES data: a little-endian uint32. The framing is the same in
// gRPC raw_input_contents and in HTTP binary tensor data.
const BytesLengthSize = 4

// AppendBytesLength appends the length prefix of a BYTES element of n bytes.
func AppendBytesLength(dst []byte, n int) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(n))
}

// AppendBytesElement appends one BYTES element, its length prefix and then
// its bytes. It takes a string as well as a []byte so that callers holding
// decoded JSON strings need no conversion.
func AppendBytesElement[E ~string | ~[]byte](dst []byte, elem E) []byte {
	dst = AppendBytesLength(dst, len(elem))
	return append(dst, elem...)
}

// BytesLength reads the length prefix at the start of b: the length of the
// element that follows it, and false when b is shorter than a prefix.
func BytesLength(b []byte) (int64, bool) {
	if len(b) < BytesLengthSize {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint32(b)), true
}

// EncodeBytes serialises BYTES elements in Triton's raw form: each element
// as a 4-byte little-endian length followed by its bytes.
func EncodeBytes(elems [][]byte) []byte {
	size := 0
	for _, e := range elems {
		size += BytesLengthSize + len(e)
	}
	out := make([]byte, 0, size)
	for _, e := range elems {
		out = AppendBytesElement(out, e)
	}
	return out
}

// DecodeBytes parses n BYTES elements from Triton's raw form. It fails like
// Triton does on a truncated length or a wrong element count.
func DecodeBytes(b []byte, n int) ([][]byte, error) {
	out := make([][]byte, 0, max(n, 0))
	for len(b) > 0 {
		l, ok := BytesLength(b)
		if !ok {
			return nil, fmt.Errorf("incomplete string length indicator, expected %d bytes, got %d", BytesLengthSize, len(b))
		}
		b = b[BytesLengthSize:]
		if l > int64(len(b)) {
			return nil, fmt.Errorf("incomplete string data, expected %d bytes, got %d", l, len(b))
		}
		out = append(out, b[:l])
		b = b[l:]
	}
	if n >= 0 && len(out) != n {
		return nil, fmt.Errorf("expected %d string elements, got %d", n, len(out))
	}
	return out, nil
}
