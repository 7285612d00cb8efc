package sim

import (
	"slices"
	"testing"
)

// TestConfigCheckHelpers: the helpers of Triton's config checks: a
// platform's backend, a shape's element count (-1 with a variable
// dimension, 0 for no dimension), the counts between variable dimensions
// (what a reshape must keep), and the GPU list an error names.
func TestConfigCheckHelpers(t *testing.T) {
	for platform, want := range map[string]string{
		platformTFGraphDef: backendTensorFlow, platformTFSavedModel: backendTensorFlow, platformTensorRT: backendTensorRT,
		platformONNX: backendONNX, platformLibTorch: backendPyTorch, platformTorchAOTI: "pytorch(aoti)", "ensemble": "",
	} {
		if got := backendOfPlatform(platform); got != want {
			t.Errorf("backendOfPlatform(%q) = %q, want %q", platform, got, want)
		}
	}
	for _, c := range []struct {
		dims   []int64
		count  int64
		trunks []int64
	}{
		{nil, 0, []int64{1}},
		{[]int64{3, 224, 224}, 3 * 224 * 224, []int64{3 * 224 * 224}},
		{[]int64{-1, 16}, -1, []int64{1, 16}},
		{[]int64{2, -1, 3, 4, -1}, -1, []int64{2, 12, 1}},
	} {
		if got := wildcardCount(c.dims); got != c.count {
			t.Errorf("wildcardCount(%v) = %d, want %d", c.dims, got, c.count)
		}
		if got := wildcardTrunks(c.dims); !slices.Equal(got, c.trunks) {
			t.Errorf("wildcardTrunks(%v) = %v, want %v", c.dims, got, c.trunks)
		}
	}
	if got := gpuList(3); got != "0, 1, 2" {
		t.Errorf("gpuList(3) = %q", got)
	}
}
