package sim

import (
	"bytes"
	"encoding/json"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tritontop/tritontop/triton/pb"
)

// parseConfigJSON reads a configuration override as Triton's
// JsonToModelConfig does: protobuf's JSON mapping, unknown fields refused,
// enum names in any case.
func parseConfigJSON(s string) (*pb.ModelConfig, error) {
	cfg := &pb.ModelConfig{}
	data := []byte(s)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) == nil && !dec.More() {
		if b, err := json.Marshal(upperEnums(tree, cfg.ProtoReflect().Descriptor())); err == nil {
			data = b
		}
	}
	if err := protojson.Unmarshal(data, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// upperEnums walks a JSON tree of message md and writes the enum names
// it holds in upper case, as Triton's case-insensitive parsing reads them.
func upperEnums(v any, md protoreflect.MessageDescriptor) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	fields := md.Fields()
	for key, val := range obj {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByName(protoreflect.Name(key))
		}
		if fd == nil {
			continue
		}
		obj[key] = upperField(val, fd)
	}
	return obj
}

func upperField(v any, fd protoreflect.FieldDescriptor) any {
	if fd.IsMap() {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for k, e := range m {
			m[k] = upperValue(e, fd.MapValue())
		}
		return m
	}
	if list, ok := v.([]any); ok && fd.IsList() {
		for i, e := range list {
			list[i] = upperValue(e, fd)
		}
		return list
	}
	return upperValue(v, fd)
}

func upperValue(v any, fd protoreflect.FieldDescriptor) any {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if s, ok := v.(string); ok {
			return strings.ToUpper(s)
		}
	case protoreflect.MessageKind:
		return upperEnums(v, fd.Message())
	}
	return v
}
