package kserve

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tritontop/tritontop/triton/pb"
)

// ConfigJSON prints a model config the way Triton's HTTP config endpoint
// does: protobuf JSON with the original snake_case field names, every
// primitive field printed, enums by name, and 64-bit integers as JSON
// numbers rather than protojson's strings.
func ConfigJSON(cfg *pb.ModelConfig) ([]byte, error) {
	raw, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode model config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("re-read model config JSON: %w", err)
	}
	tree = int64sAsNumbers(tree, cfg.ProtoReflect().Descriptor())
	// Triton 2.73's ModelEnsembling has max_inflight_requests (uint32),
	// which this package's model_config.proto predates: printed as Triton
	// prints it unset.
	if obj, ok := tree.(map[string]any); ok {
		if ens, ok := obj["ensemble_scheduling"].(map[string]any); ok {
			if _, set := ens["max_inflight_requests"]; !set {
				ens["max_inflight_requests"] = json.Number("0")
			}
		}
	}
	return json.Marshal(tree)
}

// ParseConfigJSON reads a model config printed by Triton's HTTP endpoint
// (64-bit integers as numbers or strings, unknown fields ignored so that a
// newer server's config still reads).
func ParseConfigJSON(b []byte) (*pb.ModelConfig, error) {
	cfg := &pb.ModelConfig{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, cfg); err != nil {
		return nil, fmt.Errorf("decode model config JSON: %w", err)
	}
	return cfg, nil
}

// int64sAsNumbers walks a protojson tree with its message descriptor and
// turns the string-encoded 64-bit integers back into numbers. Unset
// message fields (null with EmitUnpopulated) are dropped: Triton prints
// only the messages that are set.
func int64sAsNumbers(v any, md protoreflect.MessageDescriptor) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	fields := md.Fields()
	for key, val := range obj {
		if val == nil {
			delete(obj, key)
			continue
		}
		fd := fields.ByName(protoreflect.Name(key))
		if fd == nil {
			fd = fields.ByJSONName(key)
		}
		if fd == nil {
			continue
		}
		obj[key] = fieldAsNumbers(val, fd)
	}
	return obj
}

func fieldAsNumbers(val any, fd protoreflect.FieldDescriptor) any {
	switch {
	case fd.IsMap():
		m, ok := val.(map[string]any)
		if !ok {
			return val
		}
		for k, e := range m {
			m[k] = scalarAsNumber(e, fd.MapValue())
		}
		return m
	case fd.IsList():
		l, ok := val.([]any)
		if !ok {
			return val
		}
		for i, e := range l {
			l[i] = scalarAsNumber(e, fd)
		}
		return l
	}
	return scalarAsNumber(val, fd)
}

func scalarAsNumber(val any, fd protoreflect.FieldDescriptor) any {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return int64sAsNumbers(val, fd.Message())
	case protoreflect.Int64Kind, protoreflect.Uint64Kind, protoreflect.Sint64Kind,
		protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		if s, ok := val.(string); ok {
			return json.Number(s)
		}
	}
	return val
}
