package session

import (
	"testing"
)

func TestDemoRateStep(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want float64 }{
		{199, 150}, // 1.5 × 100 is the last step under it
		{200, 200},
		{796 * demoHostShare, 150},
		{2500 * demoHostShare, 500},
		{99.9, 70},
		{7, 7},
		{0, 0},
	} {
		if got := demoRateStep(c.in); got != c.want {
			t.Errorf("demoRateStep(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestDemoCalibrationCache: a calibration is kept per kind of request and
// read back; another model's is not mistaken for it.
func TestDemoCalibrationCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := &Config{Model: "resnet50", Protocol: "grpc", BatchSize: 1}
	if _, ok := loadDemoCalibration(dir, demoCacheKey(f)); ok {
		t.Fatal("a calibration in an empty cache")
	}
	saveDemoCalibration(dir, demoCacheKey(f), demoCalibration{HostRate: 812})
	if c, ok := loadDemoCalibration(dir, demoCacheKey(f)); !ok || c.HostRate != 812 {
		t.Errorf("read back %+v, %v", c, ok)
	}
	g := *f
	g.BatchSize = 4
	if _, ok := loadDemoCalibration(dir, demoCacheKey(&g)); ok {
		t.Error("batch 4 read batch 1's calibration")
	}
}
