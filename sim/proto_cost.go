package sim

import (
	"reflect"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Decoded protobuf can take far more memory than its wire bytes: an empty
// repeated message is two bytes on the wire and a pointer plus a struct of
// a hundred bytes in Go, a packed varint one byte and eight. So before a
// message is decoded, decodedCost walks its wire bytes with its schema and
// adds up what decoding will allocate, without allocating; the budget
// reserves that (serverCodec).

// Per-allocation costs of decoded protobuf beyond the data itself.
const (
	// costSliceEntry: a repeated field's slice grows by doubling as its
	// elements are appended, and each old slice is garbage: up to four
	// times the last length in all.
	costSliceEntry = 4
	// costPackedEntry: a packed run is counted before its slice is
	// grown, but a field may come in many runs.
	costPackedEntry = 2
	costMapEntry    = 64 // a map entry: its slot, tophash and load factor
	costPointer     = 8  // a pointer to a message in a slice
	costOneofBox    = 32 // a oneof's wrapper struct
	costBytesHead   = 24 // a string or []byte header in a slice
	costMinAlloc    = 16 // the least a string's or []byte's bytes take
)

// allocSize is what an allocation of n bytes takes: small ones round up to
// Go's size classes (at most a quarter more), large ones to pages.
func allocSize(n int64) int64 {
	if n <= 32<<10 {
		return n + n/4
	}
	return n + 8<<10
}

// tensorContents is the message whose typed elements the engine also
// converts to raw bytes: each element's bytes are counted once more.
const tensorContents protoreflect.FullName = "inference.InferTensorContents"

// protoCosts works out what decoded messages cost; it caches the Go struct
// size of each message type.
type protoCosts struct {
	sizes sync.Map // protoreflect.FullName → int64
}

// decodedCost is what decoding b as a message of md allocates, at most; a
// malformed b costs what its well-formed part does (decoding then fails).
func (c *protoCosts) decodedCost(md protoreflect.MessageDescriptor, b []byte) int64 {
	return c.structSize(md) + c.fieldsCost(md, b, 0)
}

// maxCostDepth stops the walk of nested messages (protobuf itself refuses
// past 10000; none of Triton's messages nests beyond a few levels).
const maxCostDepth = 64

// fieldsCost is what decoding b's fields into an existing struct of md
// allocates.
func (c *protoCosts) fieldsCost(md protoreflect.MessageDescriptor, b []byte, depth int) int64 {
	var cost int64
	fields := md.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return cost
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return cost
		}
		v := b[:m]
		b = b[m:]
		fd := fields.ByNumber(num)
		if fd == nil {
			// Kept as unknown bytes, appended to one buffer: when it
			// doubles, it and its copy take three times what it holds.
			cost += 3 * (int64(len(v)) + int64(n))
			continue
		}
		cost += c.fieldCost(fd, typ, v, depth)
		if md.FullName() == tensorContents {
			cost += convertedCost(fd, typ, v)
		}
	}
	return cost
}

// convertedCost is what the engine's raw copy of one occurrence of a
// typed contents field takes: each element's bytes (a BYTES element's
// with its 4-byte length).
func convertedCost(fd protoreflect.FieldDescriptor, typ protowire.Type, v []byte) int64 {
	switch {
	case fd.Kind() == protoreflect.BytesKind:
		return 4 + int64(len(payload(v)))
	case typ == protowire.BytesType:
		return scalarSize(fd.Kind()) * packedCount(fd.Kind(), len(payload(v)))
	}
	return scalarSize(fd.Kind())
}

// fieldCost is what one occurrence of field fd, wire type typ with value v
// (its bytes after the tag), allocates.
func (c *protoCosts) fieldCost(fd protoreflect.FieldDescriptor, typ protowire.Type, v []byte, depth int) int64 {
	switch {
	case fd.IsMap():
		if depth >= maxCostDepth {
			return int64(len(v))
		}
		return allocSize(costMapEntry) + c.fieldsCost(fd.Message(), payload(v), depth+1)
	case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
		if depth >= maxCostDepth {
			return int64(len(v))
		}
		n := c.structSize(fd.Message()) + c.fieldsCost(fd.Message(), payload(v), depth+1)
		if fd.IsList() {
			n += allocSize(costSliceEntry * costPointer)
		}
		if fd.ContainingOneof() != nil {
			n += allocSize(costOneofBox)
		}
		return n
	case fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.BytesKind:
		n := allocSize(max(int64(len(payload(v))), costMinAlloc))
		if fd.IsList() {
			n += allocSize(costSliceEntry * costBytesHead)
		}
		if fd.ContainingOneof() != nil {
			n += allocSize(costOneofBox)
		}
		return n
	case typ == protowire.BytesType:
		// A packed run of scalars: at most one element per byte.
		return allocSize(costPackedEntry * scalarSize(fd.Kind()) * packedCount(fd.Kind(), len(payload(v))))
	case fd.IsList():
		return allocSize(costSliceEntry * scalarSize(fd.Kind()))
	case fd.ContainingOneof() != nil:
		return allocSize(costOneofBox)
	}
	return 0 // a singular scalar lives in its struct
}

// packedCount is the most elements a packed run of n bytes holds.
func packedCount(k protoreflect.Kind, n int) int64 {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return int64(n / 4)
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return int64(n / 8)
	}
	return int64(n)
}

// scalarSize is the Go size of a scalar of kind k.
func scalarSize(k protoreflect.Kind) int64 {
	switch k {
	case protoreflect.BoolKind:
		return 1
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind,
		protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return 8
	}
	return 4
}

// payload is the content of a length-delimited value (v with its length).
func payload(v []byte) []byte {
	p, n := protowire.ConsumeBytes(v)
	if n < 0 {
		return nil
	}
	return p
}

// structSize is the Go size of a message of md, or a generous guess for a
// type with no generated Go struct.
func (c *protoCosts) structSize(md protoreflect.MessageDescriptor) int64 {
	if md == nil {
		return 0
	}
	if v, ok := c.sizes.Load(md.FullName()); ok {
		return v.(int64)
	}
	size := int64(64 + 16*md.Fields().Len())
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		if t := reflect.TypeOf(mt.Zero().Interface()); t.Kind() == reflect.Pointer {
			size = int64(t.Elem().Size())
		}
	}
	size = allocSize(size)
	c.sizes.Store(md.FullName(), size)
	return size
}
