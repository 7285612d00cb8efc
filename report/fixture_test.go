package report

import (
	"bytes"
	"testing"

	"github.com/tritontop/tritontop/record"
)

// TestCSVOfSchemaV1Fixture writes the CSV of the frozen schema-1 run file
// (record/testdata/v1.jsonl): concurrency 1 for two ticks (100 requests at
// 1 ms, then 300 at 3 ms), concurrency 2 for one tick (250 at 2 ms, with GPU
// metrics).
func TestCSVOfSchemaV1Fixture(t *testing.T) {
	run, err := record.ReadAll("../record/testdata/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, run); err != nil {
		t.Fatal(err)
	}
	// Step 1: 400 requests in 2 s; mean (100·1 ms + 300·3 ms)/400 = 2.5 ms;
	// queue (100·100+300·300)/400 = 250 µs; compute 770 µs. The GPU was
	// only read during step 2, so step 1's GPU cells are empty.
	want := csvHeader + ",Avg GPU Utilization,Avg GPU Power Usage,Max GPU Memory Usage,Total GPU Memory\n" +
		"1,200,0,1480,250,50,700,20,0,3000,3000,3000,3000,2500,0,2500,,,,\n" +
		"2,250,0,220,900,60,800,20,0,2000,2000,2000,2000,2000,0,2000,GPU-3f2a:0.5;,GPU-3f2a:400;,GPU-3f2a:18000000000;,GPU-3f2a:141000000000;\n"
	if b.String() != want {
		t.Errorf("CSV\n got %s\nwant %s", b.String(), want)
	}
}
