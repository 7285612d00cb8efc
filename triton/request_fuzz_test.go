package triton

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// fuzzDatatypes are the datatypes FuzzParseShapes gives its inputs: one of
// each element size, and BYTES.
var fuzzDatatypes = []string{"BOOL", "FP16", "FP32", "INT64", "BYTES"}

// FuzzParseShapes parses arbitrary --shape values (one per line) and builds
// requests with the result for a model whose inputs have those names and
// variable dims. Whatever the values, the parser returns shapes that print
// back to themselves or a one-line error naming --shape, and BuildRequests
// returns requests of the promised size or an error, never a panic and
// never more than MaxBytes of data.
func FuzzParseShapes(f *testing.F) {
	for _, seed := range []struct {
		spec         string
		dtype, batch uint8
	}{
		{"INPUT0:1,16", 2, 1},
		{"input_ids:128\nattention_mask:128", 3, 4},
		{"IN:3,224,224", 2, 1},
		{"TEXT:2", 4, 8},
		{"ns:name:1,2", 0, 1},
		{"X:0", 1, 1},
		{"X: 4 , 5", 2, 2},
		{"input_ids:99999999999", 3, 1},
		{"X:3037000500,3037000500", 2, 1},
		{"X:4294967296,4294967296", 0, 1},
		{"X:9223372036854775807", 4, 1},
		{"X:1\nX:2", 2, 1},
		{"X:-1", 2, 1},
		{"X:", 2, 1},
		{":1", 2, 1},
		{"X:1,,2", 2, 1},
		{"X:1", 2, 9},
	} {
		f.Add(seed.spec, seed.dtype, seed.batch)
	}
	f.Fuzz(func(t *testing.T, spec string, dtype, batch uint8) {
		flags := strings.Split(spec, "\n")
		shapes, err := ParseShapes(flags)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "bad --shape ") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line starting with \"bad --shape\"", msg)
			}
			return
		}
		if len(shapes) != len(flags) {
			t.Fatalf("%d flags gave %d shapes", len(flags), len(shapes))
		}
		// Printed back, the shapes parse to themselves.
		names := make([]string, 0, len(shapes))
		for name := range shapes {
			names = append(names, name)
		}
		slices.Sort(names)
		again := make([]string, len(names))
		for i, name := range names {
			dims := make([]string, len(shapes[name]))
			for j, d := range shapes[name] {
				if d < 0 {
					t.Fatalf("input %q got negative dim %d", name, d)
				}
				dims[j] = strconv.FormatInt(d, 10)
			}
			again[i] = name + ":" + strings.Join(dims, ",")
		}
		round, err := ParseShapes(again)
		if err != nil {
			t.Fatalf("shapes printed as %q do not parse: %v", again, err)
		}
		for name, dims := range shapes {
			if !slices.Equal(round[name], dims) {
				t.Fatalf("input %q: %v printed and parsed again is %v", name, dims, round[name])
			}
		}

		// Build requests for a batching model with those inputs.
		datatype := fuzzDatatypes[int(dtype)%len(fuzzDatatypes)]
		md := &pb.ModelMetadataResponse{Name: "fuzz"}
		cfg := &pb.ModelConfig{Name: "fuzz", MaxBatchSize: 8}
		for _, name := range names {
			dims := make([]int64, len(shapes[name]))
			for i := range dims {
				dims[i] = -1
			}
			md.Inputs = append(md.Inputs, &pb.ModelMetadataResponse_TensorMetadata{Name: name, Datatype: datatype, Shape: append([]int64{-1}, dims...)})
		}
		const maxBytes = 1 << 20
		opts := InputOptions{Shapes: shapes, BatchSize: int(batch % 10), StringLength: 3, MaxBytes: maxBytes}
		reqs, err := BuildRequests(md, cfg, opts)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		b := max(1, opts.BatchSize)
		total := 0
		for _, in := range reqs[0].Inputs {
			want := append([]int64{int64(b)}, shapes[in.Name]...)
			if !slices.Equal(in.Shape, want) {
				t.Fatalf("input %s has shape %v, want %v", in.Name, in.Shape, want)
			}
			elems := kserve.ElementCount(in.Shape)
			size := int64(kserve.ElementSize(datatype))
			if datatype == "BYTES" {
				size = 4 + 3
			}
			if int64(len(in.Data)) != elems*size {
				t.Fatalf("input %s of shape %v (%s) has %d bytes, want %d", in.Name, in.Shape, datatype, len(in.Data), elems*size)
			}
			total += len(in.Data)
		}
		if total > maxBytes {
			t.Fatal(fmt.Sprintf("request of %d bytes, over the %d limit", total, maxBytes))
		}
	})
}
