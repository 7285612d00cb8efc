package tui

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tritontop/tritontop/record"
	"github.com/tritontop/tritontop/stats"
	"github.com/tritontop/tritontop/triton/kserve"
)

// llmRun is testdata/llm.jsonl, recorded by tritontop against the demo's
// llm model (see testdata/README.md) and never regenerated, with the
// header the dashboard would have had: a decoupled model under
// concurrency 2, 8, then 14, ten seconds each, then the drain.
func llmRun(t testing.TB) ([]stats.Snapshot, HeaderInfo) {
	t.Helper()
	run, err := record.ReadAll("testdata/llm.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h := run.Header
	info := HeaderInfo{
		Server: h.Server.URL, Protocol: h.Server.Protocol, Model: h.Model.Name, Version: h.Model.Version,
		Simulated: h.Server.Simulated, SharedProcess: h.Server.InProcess,
	}
	cfg, err := kserve.ParseConfigJSON(h.Model.Config)
	if err != nil {
		t.Fatal(err)
	}
	info.MaxBatch = int(cfg.GetMaxBatchSize())
	info.DynamicBatching = cfg.GetDynamicBatching() != nil
	info.Decoupled = cfg.GetModelTransactionPolicy().GetDecoupled()
	if !info.Decoupled || len(run.Snapshots) < 30 {
		t.Fatalf("testdata/llm.jsonl: decoupled %t, %d ticks", info.Decoupled, len(run.Snapshots))
	}
	return run.Snapshots, info
}

// llmRunning is llmRun's ticks before the drain: the screen while the
// load runs.
func llmRunning(t testing.TB) ([]stats.Snapshot, HeaderInfo) {
	t.Helper()
	snaps, info := llmRun(t)
	for i, s := range snaps {
		if s.Load.Drain {
			return snaps[:i], info
		}
	}
	return snaps, info
}

func TestStreamingScreen(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the colored goldens need colors
	snaps, info := llmRunning(t)
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := loaded(t, Options{Control: newFakeControl(14), Header: info}, snaps, sz.w, sz.h)
			out := m.Render()
			checkScreen(t, out, sz.w, sz.h)
			golden.RequireEqual(t, out)
		})
	}
}

// Focused, the streaming pane fills the body and its charts grow; at
// 80x24 it has room for them only then.
func TestStreamingFocusedScreen(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the colored goldens need colors
	snaps, info := llmRunning(t)
	for _, sz := range sizes[:2] {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := loaded(t, Options{Control: newFakeControl(14), Header: info}, snaps, sz.w, sz.h)
			m = press(t, m, tea.KeyPressMsg{Code: tea.KeyTab}, tea.KeyPressMsg{Code: tea.KeyTab})
			if m.board.ui.focus != focusLatency {
				t.Fatalf("focus %d after two tabs, want the streaming pane", m.board.ui.focus)
			}
			out := m.Render()
			checkScreen(t, out, sz.w, sz.h)
			if s := ansi.Strip(out); !strings.Contains(s, "Streaming · last 10 s") || strings.Contains(s, "Throughput") ||
				strings.Count(s, "╵00:10") != 1 {
				t.Errorf("focused streaming pane:\n%s", s)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// The pane's numbers are the selected window's, from the snapshot's
// streaming statistics; the server pane's line is the tick's
// response_stats.
func TestStreamingPaneShowsTheWindow(t *testing.T) {
	snaps, info := llmRunning(t)
	m := loaded(t, Options{Control: newFakeControl(14), Header: info}, snaps, 120, 40)
	last := snaps[len(snaps)-1]
	check := func(m Model, cs stats.ClientStats, title string) {
		t.Helper()
		lines := screenLines(m)
		sc := cs.Streaming
		row := func(name string, l stats.Latency) string {
			return fmt.Sprintf("%-8s%9s%9s%9s%9s%9s", name, fmtMsIn(l.P50, 8), fmtMsIn(l.P90, 8), fmtMsIn(l.P99, 8),
				fmtMsIn(l.Mean, 8), fmtCount(l.Count))
		}
		for _, want := range []string{
			title,
			row("ttft", sc.TTFT), row("itl", sc.ITL), row("request", cs.Latency),
			fmt.Sprintf("responses %s/s  %.1f per request  p50 %d · max %d", fmtRate(sc.ResponsesPerS), sc.PerRequest.Mean,
				sc.PerRequest.P50, sc.PerRequest.Max),
		} {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, want) }) {
				t.Errorf("the screen lacks %q:\n%s", want, strings.Join(lines, "\n"))
			}
		}
	}
	if last.Window.Streaming == nil || last.Window.Streaming.TTFT.Count == 0 || last.Run.Streaming.TTFT.Count <= last.Window.Streaming.TTFT.Count {
		t.Fatalf("the fixture's last tick: window %+v, run %+v", last.Window.Streaming, last.Run.Streaming)
	}
	check(m, last.Window, "Streaming · last 10 s")
	check(press(t, m, tea.KeyPressMsg{Code: 'w', Text: "w"}), last.Run, "Streaming · whole run")

	r := last.Server.Responses
	want := fmt.Sprintf("per response  infer %s (first %s, later %s)  output %s  responses %s/s  empty %d  cancelled %d",
		fmtDur(r.ComputeInfer), fmtDur(r.FirstComputeInfer), fmtDur(r.LaterComputeInfer), fmtDur(r.ComputeOutput),
		fmtRate(float64(r.Success)/last.Tick.Duration.Seconds()), r.Empty, r.Cancel)
	if out := ansi.Strip(m.Render()); !strings.Contains(out, want) {
		t.Errorf("the server pane lacks %q:\n%s", want, out)
	}
}

// A decoupled model's first ticks have no finished request: the pane says
// so instead of showing zeros. A model that is not decoupled keeps the
// latency pane, and snapshots that time responses bring the streaming
// pane even without the header's word (a run file of a decoupled model).
func TestStreamingPaneChoiceAndEmptyTicks(t *testing.T) {
	snaps, info := llmRunning(t)
	if snaps[0].Window.Streaming == nil || snaps[0].Window.Streaming.Requests != 0 {
		t.Fatalf("the fixture's first tick finished requests: %+v", snaps[0].Window.Streaming)
	}
	out := ansi.Strip(loaded(t, Options{Control: newFakeControl(2), Header: info}, snaps[:1], 120, 40).Render())
	for _, want := range []string{"Streaming · last 10 s", "ttft     ", "no request finished", "itl      ", "no second response"} {
		if !strings.Contains(out, want) {
			t.Errorf("first tick: the screen lacks %q:\n%s", want, out)
		}
	}

	empty := New(Options{Control: newFakeControl(2), Header: info})
	next, _ := empty.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if out := ansi.Strip(next.(Model).Render()); !strings.Contains(out, "Streaming") || strings.Contains(out, "Latency") {
		t.Errorf("before the first tick, a decoupled model's screen:\n%s", out)
	}

	if out := ansi.Strip(loaded(t, Options{Control: newFakeControl(32)}, closedLoopRun(10), 120, 40).Render()); strings.Contains(out, "Streaming") || !strings.Contains(out, "Latency · last 10 s") {
		t.Errorf("a model that is not decoupled:\n%s", out)
	}
	if out := ansi.Strip(loaded(t, Options{Control: newFakeControl(14)}, snaps, 120, 40).Render()); !strings.Contains(out, "Streaming · last 10 s") {
		t.Errorf("snapshots with streaming statistics, header without Decoupled:\n%s", out)
	}
}

// The server's response line keeps the model's time per response when the
// pane is narrow, and names empty, cancelled and failed responses only
// when there are some; a tick without response_stats, or whose counters
// were reset, has none.
func TestServerResponsesLine(t *testing.T) {
	st := NewStyles(false)
	s := stats.Snapshot{Interval: time.Second, Tick: stats.ClientStats{Duration: 2 * time.Second}}
	s.Server = stats.ServerStats{Available: true, Responses: &stats.ServerResponses{
		Success: 800, Empty: 4, Cancel: 2, ComputeInfer: 21 * time.Millisecond, ComputeOutput: 40 * time.Microsecond,
		ComputeInferCount: 806, FirstComputeInfer: 95 * time.Millisecond, FirstCount: 6, LaterComputeInfer: 20 * time.Millisecond, LaterCount: 800,
	}}
	for _, c := range []struct {
		iw   int
		want string
	}{
		{116, "per response  infer 21.0ms (first 95.0ms, later 20.0ms)  output 40.0µs  responses 400/s  empty 4  cancelled 2"},
		{76, "resp infer 21.0ms 1st 95.0ms later 20.0ms  out 40.0µs  400/s  empty 4  cancelled 2"},
	} {
		if got := ansi.Strip(serverResponses(st, &s, c.iw)); got != c.want {
			t.Errorf("width %d:\n got %q\nwant %q", c.iw, got, c.want)
		}
	}
	s.Server.Responses.Empty, s.Server.Responses.Cancel, s.Server.Responses.Fail = 0, 0, 3
	if got := ansi.Strip(serverResponses(st, &s, 76)); !strings.HasSuffix(got, "400/s  failed 3") {
		t.Errorf("narrow, failures only: %q", got)
	}
	if got := ansi.Strip(serverResponses(st, &s, 196)); !strings.HasSuffix(got, "empty 0  cancelled 0  failed 3") {
		t.Errorf("wide, failures: %q", got)
	}
	s.Server.Responses = &stats.ServerResponses{}
	if got := ansi.Strip(serverResponses(st, &s, 116)); got != "per response no response in the last tick" {
		t.Errorf("a tick without responses: %q", got)
	}
	s.Server.Reset = true
	if got := serverResponses(st, &s, 116); got != "" {
		t.Errorf("a reset tick: %q", got)
	}
	s.Server = stats.ServerStats{Available: true}
	if got := serverResponses(st, &s, 116); got != "" {
		t.Errorf("a model without response_stats: %q", got)
	}
}

// A live run of a decoupled model: the streaming pane is there before the
// first tick, fills as ticks come, and keeps the keys working: the window
// key shows the whole run, and ↑ raises the concurrency.
func TestStreamingFlow(t *testing.T) {
	snaps, info := llmRunning(t)
	ctl := newFakeControl(14)
	ch := make(chan stats.Snapshot, len(snaps))
	tm := teatest.NewTestModel(t, New(Options{Snapshots: ch, Control: ctl, Header: info, FPS: 50}),
		teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Streaming")) },
		teatest.WithDuration(flowTimeout))
	for _, s := range snaps {
		ch <- s
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("per request")) },
		teatest.WithDuration(flowTimeout))
	tm.Type("w")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("whole run")) },
		teatest.WithDuration(flowTimeout))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp})
	up := fmt.Sprintf("SetConcurrency(%d)", NextConcurrency(14, true, 0))
	waitCalls(t, ctl.Calls, up)
	tm.Type("q")
	m := tm.FinalModel(t, teatest.WithFinalTimeout(flowTimeout)).(Model)
	out := ansi.Strip(m.Render())
	run := snaps[len(snaps)-1].Run.Streaming
	want := fmt.Sprintf("ttft    %9s%9s%9s", fmtMsIn(run.TTFT.P50, 8), fmtMsIn(run.TTFT.P90, 8), fmtMsIn(run.TTFT.P99, 8))
	if !strings.Contains(out, "Streaming · whole run") || !strings.Contains(out, want) {
		t.Errorf("the final screen lacks the whole run's %q:\n%s", want, out)
	}
	if got := ctl.Calls(); !slices.Equal(got, []string{up}) {
		t.Errorf("calls %v, want just %s", got, up)
	}
}
