package driver

import (
	"strconv"
	"testing"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		id     string
		worker int
		seq    uint64
		ok     bool
	}{
		{"0-1", 0, 1, true},
		{"12-345", 12, 345, true},
		{"7-18446744073709551615", 7, 18446744073709551615, true},
		// Sequence numbers start at 1: 0 would match an idle worker.
		{"3-0", 3, 0, false},
		// Not ours: a response to a request another client sent.
		{"", 0, 0, false},
		{"abc", 0, 0, false},
		{"-1", 0, 0, false},
		{"1-", 0, 0, false},
		{"1-x", 0, 0, false},
		{"1x-2", 0, 0, false},
	}
	for _, tt := range tests {
		w, s, ok := parseID(tt.id)
		if w != tt.worker || s != tt.seq || ok != tt.ok {
			t.Errorf("parseID(%q) = (%d, %d, %v), want (%d, %d, %v)", tt.id, w, s, ok, tt.worker, tt.seq, tt.ok)
		}
	}
	// What tryStream writes, parseID reads.
	b := strconv.AppendUint(nil, 4095, 10)
	b = append(b, '-')
	b = strconv.AppendUint(b, 99, 10)
	if w, s, ok := parseID(string(b)); w != 4095 || s != 99 || !ok {
		t.Errorf("round trip gave (%d, %d, %v)", w, s, ok)
	}
}
