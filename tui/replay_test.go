package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
)

// replayModel is the dashboard over a real record.Replay of snaps, as
// `tritontop replay` builds it, at 100×30.
func replayModel(t *testing.T, snaps []stats.Snapshot, speed float64) (Model, *record.Replay) {
	t.Helper()
	rp := record.NewReplay(snaps, speed)
	rp.HoldAtEnd(true)
	h := header
	h.Recording = "replay of run.jsonl"
	m := loaded(t, Options{Replay: rp, Header: h}, snaps, 100, 30)
	return m, rp
}

func press(t *testing.T, m Model, msgs ...tea.KeyPressMsg) Model {
	t.Helper()
	var tm tea.Model = m
	for _, k := range msgs {
		tm, _ = tm.Update(k)
	}
	return tm.(Model)
}

func headerLines(m Model) string {
	lines := strings.SplitN(m.Render(), "\n", 3)
	return lines[0] + "\n" + lines[1]
}

var (
	keyRight = tea.KeyPressMsg{Code: tea.KeyRight}
	keySpace = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	keyPlus  = tea.KeyPressMsg{Code: '+', Text: "+"}
	keyMinus = tea.KeyPressMsg{Code: '-', Text: "-"}
)

// A step pauses the replay: the header must say so, and space must then
// resume it rather than pause it again.
func TestReplayStepShowsPausedAndSpaceResumes(t *testing.T) {
	m, rp := replayModel(t, closedLoopRun(10), 1)
	m = press(t, m, keyRight)
	if !rp.Paused() {
		t.Fatal("record.Replay no longer pauses on Step; this test's premise is gone")
	}
	if h := headerLines(m); !strings.Contains(h, "replay paused") {
		t.Errorf("header after a step does not say paused:\n%s", h)
	}
	m = press(t, m, keySpace)
	if rp.Paused() {
		t.Error("space after a step left the replay paused")
	}
	if h := headerLines(m); !strings.Contains(h, "▶ replay") {
		t.Errorf("header after space does not say playing:\n%s", h)
	}
}

// --speed sets the replay's speed before the dashboard starts: the header
// shows it and + doubles it.
func TestReplayShowsAndStepsItsOwnSpeed(t *testing.T) {
	m, rp := replayModel(t, closedLoopRun(10), 4)
	if h := headerLines(m); !strings.Contains(h, "replay 4×") {
		t.Errorf("header does not show speed 4:\n%s", h)
	}
	press(t, m, keyPlus)
	if s := rp.Speed(); s != 8 {
		t.Errorf("+ from 4× set speed %g, want 8", s)
	}

	m, rp = replayModel(t, closedLoopRun(10), 0)
	if h := headerLines(m); !strings.Contains(h, "replay max speed") {
		t.Errorf("header does not show the fastest speed:\n%s", h)
	}
	press(t, m, keyPlus)
	if s := rp.Speed(); s != 0 {
		t.Errorf("+ at max speed set speed %g, want it kept at 0", s)
	}
	press(t, m, keyMinus)
	if s := rp.Speed(); s != 64 {
		t.Errorf("- from max speed set speed %g, want 64", s)
	}
}

// A replay that holds at its end says that it ended.
func TestReplayEndIsShown(t *testing.T) {
	snaps := closedLoopRun(5)
	rp := record.NewReplay(snaps, 0)
	rp.HoldAtEnd(true)
	ch := make(chan stats.Snapshot, len(snaps))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rp.Run(ctx, func(s stats.Snapshot) { ch <- s })
	deadline := time.Now().Add(10 * time.Second)
	for i, n := rp.Position(); i < n-1; i, n = rp.Position() {
		if time.Now().After(deadline) {
			t.Fatalf("replay stuck at %d of %d", i, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var tm tea.Model = New(Options{Snapshots: ch, Replay: rp, Header: header})
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	tm, _ = tm.Update(frameMsg{})
	if h := headerLines(tm.(Model)); !strings.Contains(h, "replay ended") {
		t.Errorf("header at the end of the replay:\n%s", h)
	}
}

// A replay names its file without the red dot of a recording.
func TestReplayHeaderIsNotRecording(t *testing.T) {
	m, _ := replayModel(t, closedLoopRun(5), 1)
	h := headerLines(m)
	if strings.Contains(h, "rec ") || !strings.Contains(h, "replay of run.jsonl") {
		t.Errorf("replay header:\n%s", h)
	}
}

// The help lists only keys that do something: a replay has no windows to
// reset.
func TestReplayHelpHasNoReset(t *testing.T) {
	m, _ := replayModel(t, closedLoopRun(5), 1)
	m = press(t, m, tea.KeyPressMsg{Code: '?', Text: "?"})
	if out := m.Render(); strings.Contains(out, "reset") {
		t.Errorf("replay help offers reset:\n%s", out)
	}
}
