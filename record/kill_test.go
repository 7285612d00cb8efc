package record

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tritontop/tritontop/internal/testproc"
)

// childEnv names the run file a re-executed test binary records into until
// it is killed.
const childEnv = "TRITONTOP_RECORD_TEST_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(recordUntilKilled(path))
	}
	os.Exit(m.Run())
}

// recordUntilKilled writes snapshots as fast as a real recorder plausibly
// could, forever.
func recordUntilKilled(path string) int {
	w, err := Create(path, testHeader())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	s := tick(nil, 1, 4, 200, 1500, [5]int64{1400, 300, 40, 1000, 30})
	for seq := 1; ; seq++ {
		s.Seq = seq
		s.Elapsed = time.Duration(seq) * time.Millisecond
		if err := w.WriteSnapshot(s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 4
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// TestKilledRecorderLeavesReadableFile kills a recording process with
// SIGKILL and checks that every line it completed reads back.
func TestKilledRecorderLeavesReadableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed.jsonl")
	cmd := testproc.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Let it record for about 300 ms from its first line.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("child never wrote its header")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	run, err := ReadAll(path)
	if err != nil {
		t.Fatalf("ReadAll after SIGKILL: %v", err)
	}
	if run.Header.Schema != 1 || run.Header.Model.Name != "resnet50" {
		t.Errorf("header %+v", run.Header)
	}
	if len(run.Snapshots) == 0 {
		t.Fatal("no snapshots survived")
	}
	if run.Summary != nil {
		t.Error("a killed run has a summary")
	}
	for i, s := range run.Snapshots {
		if s.Seq != i+1 {
			t.Fatalf("snapshot %d has seq %d: lines lost or reordered", i, s.Seq)
		}
		if s.Tick.Requests != 200 || s.Histogram == "" {
			t.Fatalf("snapshot %d incomplete: %+v", i, s.Tick)
		}
	}
	t.Logf("%d snapshots read back, truncated=%v", len(run.Snapshots), run.Truncated)
}
