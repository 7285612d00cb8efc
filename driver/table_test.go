package driver

import "testing"

func TestWorkerTable(t *testing.T) {
	var tab workerTable
	if tab.get(0) != nil || tab.len() != 0 {
		t.Fatal("empty table has a worker")
	}
	const n = 3*chunkSize + 5
	for i := range n {
		tab.add(&worker{id: i})
	}
	if tab.len() != n {
		t.Fatalf("len %d, want %d", tab.len(), n)
	}
	for _, i := range []int{0, chunkSize - 1, chunkSize, n - 1} {
		if w := tab.get(i); w == nil || w.id != i {
			t.Errorf("get(%d) = %v", i, w)
		}
	}
	if tab.get(n) != nil || tab.get(-1) != nil {
		t.Error("get out of range returned a worker")
	}
	seen := 0
	tab.each(func(w *worker) {
		if w.id != seen {
			t.Fatalf("each gave worker %d at %d", w.id, seen)
		}
		seen++
	})
	if seen != n {
		t.Errorf("each visited %d, want %d", seen, n)
	}
}
