package triton

import "testing"

func TestNumericRoundTrip(t *testing.T) {
	i32 := []int32{1, -2, 1 << 30}
	if got := Int32s(PutInt32s(i32)); len(got) != 3 || got[1] != -2 || got[2] != 1<<30 {
		t.Errorf("int32 round trip = %v", got)
	}
	f32 := []float32{1.5, -0.25}
	if got := Float32s(PutFloat32s(f32)); got[0] != 1.5 || got[1] != -0.25 {
		t.Errorf("fp32 round trip = %v", got)
	}
	i64 := []int64{-1, 1 << 40}
	if got := Int64s(PutInt64s(i64)); got[0] != -1 || got[1] != 1<<40 {
		t.Errorf("int64 round trip = %v", got)
	}
}
