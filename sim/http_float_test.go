package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// jsonEqual compares two JSON documents by value.
func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// TestRapidJSONDoubles: floats are written as Triton's JSON writer writes
// them (the real server's text for these values).
func TestRapidJSONDoubles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{float64(float32(0.1)), "0.10000000149011612"},
		{float64(float32(1e20)), "100000002004087730000.0"},
		{-2.5, "-2.5"},
		{3, "3.0"},
		{float64(float32(1e-7)), "1.0000000116860974e-7"},
		{123.123, "123.123"},
		{0, "0.0"},
		{1e-6, "0.000001"},
		{1.5e300, "1.5e300"},
		{1e22, "1e22"},
	} {
		if got := string(appendRapidJSONDouble(nil, tc.f)); got != tc.want || !jsonEqual(got, tc.want) {
			t.Errorf("%g: %s; want %s", tc.f, got, tc.want)
		}
	}
	if !strings.HasPrefix(string(appendJSONFloat(nil, 2, 32)), "2.0") {
		t.Error("appendJSONFloat does not write Triton's text")
	}
}
