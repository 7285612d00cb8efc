package tune

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// textFormat writes m in protobuf text format, the way Triton's
// config.pbtxt files are written: a field per line in the message's field
// order, nested messages in braces, map entries sorted by key. Unlike
// prototext's Format, whose spacing varies on purpose from build to
// build, its output is the same for the same message.
func textFormat(m protoreflect.Message) string {
	var b strings.Builder
	writeMessage(&b, m, "")
	return b.String()
}

func writeMessage(b *strings.Builder, m protoreflect.Message, indent string) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			writeMap(b, fd, v.Map(), indent)
		case fd.IsList():
			l := v.List()
			for j := range l.Len() {
				writeField(b, fd, fd.Name(), l.Get(j), indent)
			}
		default:
			writeField(b, fd, fd.Name(), v, indent)
		}
	}
}

// writeField writes one value of field fd named name.
func writeField(b *strings.Builder, fd protoreflect.FieldDescriptor, name protoreflect.Name, v protoreflect.Value, indent string) {
	b.WriteString(indent)
	b.WriteString(string(name))
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		b.WriteString(" {\n")
		writeMessage(b, v.Message(), indent+"  ")
		b.WriteString(indent + "}\n")
		return
	}
	b.WriteString(": ")
	b.WriteString(scalar(fd, v))
	b.WriteString("\n")
}

// writeMap writes a map field's entries, sorted by key, as the text
// format's repeated key/value messages.
func writeMap(b *strings.Builder, fd protoreflect.FieldDescriptor, m protoreflect.Map, indent string) {
	var keys []protoreflect.MapKey
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.SortFunc(keys, func(a, c protoreflect.MapKey) int { return cmp.Compare(a.String(), c.String()) })
	kd, vd := fd.MapKey(), fd.MapValue()
	for _, k := range keys {
		b.WriteString(indent + string(fd.Name()) + " {\n")
		writeField(b, kd, "key", k.Value(), indent+"  ")
		writeField(b, vd, "value", m.Get(k), indent+"  ")
		b.WriteString(indent + "}\n")
	}
}

// scalar is a scalar value as the text format writes it.
func scalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	case protoreflect.StringKind:
		return quote([]byte(v.String()))
	case protoreflect.BytesKind:
		return quote(v.Bytes())
	case protoreflect.FloatKind:
		return strconv.FormatFloat(v.Float(), 'g', -1, 32)
	case protoreflect.DoubleKind:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return v.String()
}

// quote is a string in double quotes with the text format's escapes:
// printable ASCII as it is, the rest as octal bytes, which every text
// format parser reads back to the same bytes.
func quote(s []byte) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			b.WriteString("\\" + strconv.FormatInt(int64(c)>>6, 8) + strconv.FormatInt(int64(c)>>3&7, 8) + strconv.FormatInt(int64(c)&7, 8))
		}
	}
	b.WriteByte('"')
	return b.String()
}
