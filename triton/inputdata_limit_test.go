package triton

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadInputDataBounded: an --input-data file over MaxInputDataBytes is
// refused before it is read, in one line with the limit.
func TestLoadInputDataBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: its size is over the limit without writing 32 MiB.
	if err := f.Truncate(MaxInputDataBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = LoadInputData(path)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 33554432") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("LoadInputData of a file over the limit: %v", err)
	}
	small := filepath.Join(t.TempDir(), "small.json")
	if err := os.WriteFile(small, []byte(`{"data":[{"INPUT0":[1,2,3]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadInputData(small); err != nil {
		t.Fatalf("a small file: %v", err)
	}
}
