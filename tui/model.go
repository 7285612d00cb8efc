// Package tui is tritontop's dashboard: a Bubble Tea program that draws
// stats.Snapshots at a fixed frame rate and turns key presses into load
// changes through a LoadControl. It reads snapshots from a channel (the
// aggregator's, or a replay's) and keeps a fixed-size history of them for
// its charts; every pane is a pure function of that history and of what the
// person chose (window, focus, help). What limits the load comes from
// stats.Diagnose over the latest ticks, the verdicts the headless line and
// the summary give too; a stepped run's progress comes from a
// SweepProgress (a plan.Stepper).
package tui

import (
	"os"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/tritontop/tritontop/stats"
)

// maxDrain bounds the snapshots taken from the channel in one frame, so
// that a replay running far ahead cannot stall the screen.
const maxDrain = 4 * HistoryLength

// frameMsg is the frame clock.
type frameMsg time.Time

// Model is the dashboard, a tea.Model. Create it with New.
type Model struct {
	opts    Options
	common  *Common
	board   *board
	help    help.Model
	header  *headerPane
	panes   [paneCount]pane
	frame   time.Duration
	noColor bool
	// Set by layout: the key hints' lines, the panes shown and their
	// places, and the warning lines (the findings wrapped to the width,
	// redone when the findings or the width change).
	footer []string
	show   shown
	rects  [paneCount]rect
	body   int // the rows between the header and the warning lines
	warn   warnArea
	// note answers a key that does nothing here, on the key hints' line
	// until the next key: "one model: m switches models in a run of
	// several".
	note string
}

// warnArea is the lines under the panes that say the findings. When they
// take more lines than the screen gives them, they scroll a line every
// warnScroll.
type warnArea struct {
	all       []string
	rows      int
	offset    int
	diagnosed int // the board's diagnosis the lines were made from
	width     int
	frames    int // frames since the last scroll
}

// warnScroll is how long a line of findings stays before the lines scroll.
const warnScroll = 2 * time.Second

// New returns the dashboard for o. It reads the NO_COLOR environment
// variable; a colorless terminal turns colors off as well once the program
// reports it.
func New(o Options) Model {
	if o.FPS <= 0 {
		o.FPS = DefaultFPS
	}
	replay := o.Control == nil && !slices.ContainsFunc(o.Models, func(mc ModelControl) bool { return mc.Control != nil })
	// Any non-empty NO_COLOR turns colors off (no-color.org).
	noColor := o.NoColor || os.Getenv("NO_COLOR") != ""
	c := &Common{Width: 80, Height: 24, Styles: NewStyles(!noColor), KeyMap: NewKeyMap(replay)}
	b := &board{
		common: c,
		hist:   newHistory(HistoryLength),
		ui:     &uiState{replay: replay, focus: -1, speed: 1, model: -1},
		header: o.Header,
		base:   o.Header,
		models: o.Models,
	}
	m := Model{
		opts:    o,
		common:  c,
		board:   b,
		help:    help.New(),
		header:  &headerPane{b: b},
		frame:   time.Second / time.Duration(o.FPS),
		noColor: noColor,
	}
	m.panes = [paneCount]pane{
		&throughputPane{b: b}, newLatencySlot(b), &serverPane{b: b},
		&gpuPane{b: b}, &cpuPane{b: b}, &errorsPane{b: b}, &sweepPane{b: b},
		&replicasPane{b: b}, &modelsPane{b: b},
	}
	m.setStyles(c.Styles)
	c.KeyMap.Model.SetEnabled(len(o.Models) > 0)
	if o.Mouse {
		c.KeyMap.enableMouse()
	}
	m.readControl()
	m.readSweep()
	m.readReplay()
	m.pauseHelp()
	m.layout()
	return m
}

// Init starts the frame clock.
func (m Model) Init() tea.Cmd {
	return m.tick()
}

func (m Model) tick() tea.Cmd {
	return tea.Tick(m.frame, func(t time.Time) tea.Msg { return frameMsg(t) })
}

// Update handles frames, keys, the mouse (with Options.Mouse), resizes and
// the terminal's color profile.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case frameMsg:
		m.drain()
		m.readControl()
		m.readReplay()
		m.readSweep()
		m.scrollWarnings()
		m.pauseHelp()
		m.layout()
		return m, m.tick()
	case tea.WindowSizeMsg:
		m.common.Width, m.common.Height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.ColorProfileMsg:
		if msg.Profile <= colorprofile.ASCII && !m.noColor {
			m.noColor = true
			m.setStyles(NewStyles(false))
			m.layout()
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseClickMsg:
		// The same focus as tab's, on the pane under the pointer.
		if !m.opts.Mouse || msg.Button != tea.MouseLeft {
			return m, nil
		}
		if p, ok := m.paneAt(msg.X, msg.Y); ok {
			m.board.ui.focus = p
			m.layout()
		}
		return m, nil
	case tea.MouseWheelMsg:
		if !m.opts.Mouse {
			return m, nil
		}
		if p, ok := m.paneAt(msg.X, msg.Y); ok && drawsHistory(p) {
			// Each event moves the charts an eighth of the width of the
			// chart under the pointer: a screenful in eight, at any width.
			cols := max(1, m.rects[p].w-4-chartAxis)
			switch msg.Button {
			case tea.MouseWheelUp, tea.MouseWheelLeft:
				m.scroll(-max(1, cols/8), cols)
			case tea.MouseWheelDown, tea.MouseWheelRight:
				m.scroll(max(1, cols/8), cols)
			}
		}
		return m, nil
	}
	return m, nil
}

// paneAt is the pane drawn at screen cell (x, y), if any: the header, the
// warning lines and the key hints are no pane's.
func (m *Model) paneAt(x, y int) (int, bool) {
	y -= headerRows
	if y < 0 || y >= m.body {
		return -1, false
	}
	for i, r := range m.rects {
		// Render draws a pane only with its frame's two rows.
		if r.w > 0 && r.h >= 2 && x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h {
			return i, true
		}
	}
	return -1, false
}

// drawsHistory says whether pane p draws the history (charts or
// sparklines), which the wheel over it scrolls.
func drawsHistory(p int) bool {
	switch p {
	case focusThroughput, focusLatency, focusServer, focusGPU, focusCPU, focusReplicas:
		return true
	}
	return false
}

// scroll moves the charts' right edge by delta ticks (negative: back in
// time), stopping where a chart of cols columns shows the oldest tick at
// its left edge; reaching the latest tick makes them live again.
func (m *Model) scroll(delta, cols int) {
	b := m.board
	n := b.hist.len()
	end := b.chartEnd() + delta
	end = max(end, min(n-1, cols-1))
	if end >= n-1 {
		m.live()
		return
	}
	ui := b.ui
	ui.scrolled, ui.scrollSeq, ui.scrollCols = true, b.hist.at(end).Seq, cols
}

// live returns the charts to now.
func (m *Model) live() {
	ui := m.board.ui
	ui.scrolled, ui.scrollSeq, ui.scrollCols = false, 0, 0
}

// drain takes every snapshot waiting on the channel without blocking.
func (m *Model) drain() {
	if m.opts.Snapshots == nil {
		return
	}
	pushed := false
	defer func() {
		if pushed {
			m.board.diagnose()
		}
	}()
	for range maxDrain {
		select {
		case s, ok := <-m.opts.Snapshots:
			if !ok {
				m.opts.Snapshots = nil
				m.board.ui.ended = true
				return
			}
			m.push(s)
			pushed = true
			if m.board.ui.replay {
				m.board.ui.load = m.board.hist.latest().Load
			}
		default:
			return
		}
	}
}

// readSweep refreshes a stepped run's progress, and turns the load keys
// off while the steps set the load.
func (m *Model) readSweep() {
	if m.opts.Sweep == nil {
		return
	}
	ui := m.board.ui
	ui.sweep, ui.sweeping = m.opts.Sweep.Progress(), true
	k := m.common.KeyMap
	on := m.opts.Control != nil && ui.sweep.Done
	k.Up.SetEnabled(on)
	k.Down.SetEnabled(on)
}

// scrollWarnings moves the warning lines on by one every warnScroll when
// they do not all fit.
func (m *Model) scrollWarnings() {
	w := &m.warn
	if len(w.all) <= w.rows {
		w.offset, w.frames = 0, 0
		return
	}
	w.frames++
	if time.Duration(w.frames)*m.frame >= warnScroll {
		w.offset = (w.offset + 1) % len(w.all)
		w.frames = 0
	}
}

// push adds a snapshot to the history. A snapshot older than the latest (a
// replay stepping back) drops the ticks after it, so the charts never show
// time running backwards. A snapshot of several models goes to the raw
// history whole, and to the panes' history as the model shown sees it.
func (m *Model) push(s stats.Snapshot) {
	b := m.board
	if len(s.Models) > 0 && b.raw == nil {
		b.raw = newHistory(HistoryLength)
		m.common.KeyMap.Model.SetEnabled(true)
	}
	if b.raw != nil {
		if l := b.raw.latest(); l != nil && s.Seq <= l.Seq {
			b.raw.truncateFrom(s.Seq)
		}
		b.raw.push(s)
		s = s.ModelView(b.ui.model)
	}
	h := b.hist
	if l := h.latest(); l != nil && s.Seq <= l.Seq {
		h.truncateFrom(s.Seq)
	}
	h.push(s)
	if b.ui.scrolled && s.Seq <= b.ui.scrollSeq {
		// A replay stepped back to where the charts were scrolled: they
		// show now again.
		m.live()
	}
}

// modelCount is the number of models of a run over several, 0 otherwise.
func (m *Model) modelCount() int {
	if n := len(m.opts.Models); n > 0 {
		return n
	}
	if m.board.raw != nil {
		if s := m.board.raw.latest(); s != nil {
			return len(s.Models)
		}
	}
	return 0
}

// selectModel shows model i (-1: all of them) in the detailed panes: their
// history is redrawn from the raw one, and the header says the model's
// facts.
func (m *Model) selectModel(i int) {
	b := m.board
	b.ui.model = i
	b.header = b.base
	if i >= 0 && i < len(b.models) {
		mc := b.models[i]
		b.header.Model, b.header.Version = mc.Name, mc.Version
		b.header.MaxBatch, b.header.DynamicBatching, b.header.Decoupled = mc.MaxBatch, mc.DynamicBatching, mc.Decoupled
	}
	if b.raw != nil {
		for b.hist.len() > 0 {
			b.hist.truncateFrom(b.hist.fromEnd(0).Seq)
		}
		for j := range b.raw.len() {
			b.hist.push(b.raw.at(j).ModelView(i))
		}
		if l := b.hist.latest(); l != nil && b.ui.replay {
			b.ui.load = l.Load
		}
	}
	b.diagnose()
	m.readControl()
}

// controls are the load controls the keys act on: the shown model's, or
// every model's when all are shown; Options.Control with one model; none
// in a replay.
func (m *Model) controls() []LoadControl {
	if len(m.opts.Models) == 0 {
		if m.opts.Control == nil {
			return nil
		}
		return []LoadControl{m.opts.Control}
	}
	var out []LoadControl
	for i, mc := range m.opts.Models {
		if mc.Control != nil && (m.board.ui.model < 0 || m.board.ui.model == i) {
			out = append(out, mc.Control)
		}
	}
	return out
}

// readControl refreshes the driver's load and state (live runs): the
// shown model's, or all the models' together.
func (m *Model) readControl() {
	cs := m.controls()
	if len(cs) == 0 {
		return
	}
	ui := m.board.ui
	if len(cs) == 1 {
		st := cs[0].State()
		ui.load, ui.paused = stats.LoadOf(st), st.Paused
		return
	}
	loads := make([]stats.Load, len(cs))
	for i, c := range cs {
		loads[i] = stats.LoadOf(c.State())
	}
	ui.load = stats.AggregateLoad(loads)
	ui.paused = ui.load.Paused
}

// readReplay refreshes the replay's state: a step pauses it, and it may
// have started at any speed or reached its end.
func (m *Model) readReplay() {
	r := m.opts.Replay
	if r == nil {
		return
	}
	ui := m.board.ui
	ui.paused, ui.speed = r.Paused(), r.Speed()
	i, n := r.Position()
	ui.atEnd = n > 0 && i >= n-1
}

func (m *Model) setStyles(st *Styles) {
	m.common.Styles = st
	m.warn.diagnosed = -1 // the warning lines are painted with the styles
	m.help.Styles = help.Styles{
		ShortKey: st.HelpKey, ShortDesc: st.HelpDesc, ShortSeparator: st.HelpSep,
		FullKey: st.HelpKey, FullDesc: st.HelpDesc, FullSeparator: st.HelpSep, Ellipsis: st.HelpSep,
	}
	m.help.ShortSeparator = "  "
}

func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.common.KeyMap
	ui := m.board.ui
	m.note = ""
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Up), key.Matches(msg, k.Down):
		m.changeLoad(key.Matches(msg, k.Up))
		// The new level's ticks are what the person wants to see.
		m.live()
	case key.Matches(msg, k.Live):
		m.live()
	case key.Matches(msg, k.Earlier), key.Matches(msg, k.Later):
		// The keys move the charts as the wheel does over the focused
		// chart, or over the throughput chart when none is focused.
		p := ui.focus
		if p < 0 || p >= len(m.rects) || !drawsHistory(p) || m.rects[p].w == 0 {
			p = focusThroughput
		}
		cols := max(1, m.rects[p].w-4-chartAxis)
		step := max(1, cols/8)
		if key.Matches(msg, k.Earlier) {
			step = -step
		}
		m.scroll(step, cols)
	case key.Matches(msg, k.Pause):
		for _, c := range m.controls() {
			if ui.paused {
				c.Resume()
			} else {
				c.Pause()
			}
		}
		ui.paused = !ui.paused
	case key.Matches(msg, k.Model):
		// All the models, then each in turn.
		if n := m.modelCount(); n > 0 {
			next := m.board.ui.model + 1
			if next >= n {
				next = -1
			}
			m.selectModel(next)
		}
	case key.Matches(msg, k.ReplayPause):
		if m.opts.Replay != nil {
			if ui.paused {
				m.opts.Replay.Resume()
			} else {
				m.opts.Replay.Pause()
			}
		}
		ui.paused = !ui.paused
	case key.Matches(msg, k.StepBack), key.Matches(msg, k.StepForward):
		if m.opts.Replay != nil {
			n := 1
			if key.Matches(msg, k.StepBack) {
				n = -1
			}
			m.opts.Replay.Step(n)
			ui.paused = true // a step pauses the replay
		}
	case key.Matches(msg, k.Faster), key.Matches(msg, k.Slower):
		ui.speed = nextSpeed(ui.speed, key.Matches(msg, k.Faster))
		if m.opts.Replay != nil {
			m.opts.Replay.SetSpeed(ui.speed)
		}
	case key.Matches(msg, k.Reset):
		if m.opts.Windows != nil {
			m.opts.Windows.ResetWindows()
		}
	case key.Matches(msg, k.Window):
		switch {
		case m.opts.Windows != nil:
			ui.window = (ui.window + 1) % len(windowChoices)
		case ui.window == 0:
			// Without a WindowControl the window is the one recorded:
			// w toggles between it and the whole run.
			ui.window = len(windowChoices) - 1
		default:
			ui.window = 0
		}
		if m.opts.Windows != nil {
			m.opts.Windows.SetWindow(windowChoices[ui.window])
		}
	case key.Matches(msg, k.Focus), key.Matches(msg, k.FocusBack):
		step := 1
		if key.Matches(msg, k.FocusBack) {
			step = -1
		}
		ui.focus = nextFocus(ui.focus, step, m.show)
	case key.Matches(msg, k.FocusPane):
		if p := nthPane(int(msg.Code-'0'), m.show); p >= 0 {
			ui.focus = p
		}
	case key.Matches(msg, k.Back):
		ui.focus = -1
		m.help.ShowAll = false
	case key.Matches(msg, k.Help):
		m.help.ShowAll = !m.help.ShowAll
	default:
		m.note = unusedKeyNote(k, msg)
	}
	m.pauseHelp()
	m.layout()
	return m, nil
}

// pauseHelp names what the pause keys do now: resume once paused.
func (m *Model) pauseHelp() {
	k := m.common.KeyMap
	if m.board.ui.paused {
		k.Pause.SetHelp("p", "resume")
		k.ReplayPause.SetHelp("space", "play")
	} else {
		k.Pause.SetHelp("p", "pause")
		k.ReplayPause.SetHelp("space", "pause")
	}
}

// changeLoad moves the load one step up or down, from the driver's current
// target, and shows the new target at once. With all the models of a run
// over several shown, each model's load moves one step of its own.
func (m *Model) changeLoad(up bool) {
	cs := m.controls()
	for _, c := range cs {
		st := c.State()
		if st.Target.Open() {
			c.SetRate(NextRate(st.Target.Rate, up, m.opts.Step.RateFactor))
		} else {
			c.SetConcurrency(NextConcurrency(st.Target.Concurrency, up, m.opts.Step.Concurrency))
		}
	}
	if len(cs) > 0 {
		m.readControl()
	}
}

// View draws the whole screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "tritontop"
	if m.opts.Mouse {
		// Clicks and the wheel only; without Mouse no mode is asked for,
		// so the terminal keeps its own text selection.
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

// layout sizes the help line and the panes for the screen, the focus and
// the number of GPUs, so that drawing is a pure function of the state. It
// runs after every message that can change one of them.
func (m *Model) layout() {
	c := m.common
	w, h := c.Width, c.Height
	m.help.SetWidth(max(w-1, 0))
	m.footer = strings.Split(m.help.View(c.KeyMap), "\n")
	if m.note != "" {
		m.footer[0] = c.Styles.Warn.Render(m.note) + "  " + m.footer[0]
	}
	m.rects = [paneCount]rect{}
	m.header.SetSize(max(w, 0), headerRows)
	m.layoutWarnings()
	gpus, errors, replicas, steps := 0, false, 0, 0
	if s := m.board.hist.latest(); s != nil {
		gpus = len(s.Metrics.GPUs)
		steps = stepCount(s.Server.Steps)
		// Retries show there too: every retry may have succeeded.
		errors = s.Run.Errors > 0 || s.Window.Errors > 0 || s.Run.Retries > 0
		replicas = len(s.Replicas)
	}
	models := m.modelCount()
	m.show = allPanes(errors, m.board.ui.sweeping)
	m.show[focusReplicas] = replicas > 0
	m.show[focusModels] = models > 0
	body := h - headerRows - m.warn.rows - len(m.footer)
	m.body = max(body, 0)
	if w <= 0 || body <= 0 {
		return
	}
	m.rects = bottomLayout(w, body, m.board.ui.focus, gpus, steps, models, replicas, m.show)
	for i, p := range m.panes {
		// A pane needs its frame's two rows; a body shorter than that (a
		// tiny terminal) stays blank.
		if m.rects[i].w > 0 && m.rects[i].h >= 2 {
			p.SetSize(m.rects[i].w, m.rects[i].h)
		}
	}
}

// headerRows is the height of the header.
const headerRows = 2

// layoutWarnings wraps the findings to the screen's width when they, the
// width or the styles changed, and sets the rows they take: always one, so
// that a single verdict coming or going does not move the panes, and up
// to warnRows when the findings need more.
func (m *Model) layoutWarnings() {
	w, b := &m.warn, m.board
	width := m.common.Width - 1
	if w.diagnosed != b.diagnosed || w.width != width {
		w.all = warnLines(m.common.Styles, b.findings, b.spans, width)
		w.diagnosed, w.width = b.diagnosed, width
		if w.offset >= len(w.all) {
			w.offset = 0
		}
	}
	w.rows = max(1, min(len(w.all), warnRows(m.common.Height)))
}

// Render draws the whole screen as exactly Height lines of Width cells:
// header, panes, the warning line and the key hints. It changes nothing:
// sizes are set by layout.
func (m Model) Render() string {
	c := m.common
	w, h := c.Width, c.Height
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := make([]string, 0, h)
	lines = append(lines, strings.Split(m.header.View(), "\n")...)

	if body := h - len(lines) - m.warn.rows - len(m.footer); body > 0 {
		var views [paneCount]string
		for i, p := range m.panes {
			if m.rects[i].w > 0 && m.rects[i].h >= 2 {
				views[i] = p.View()
			}
		}
		lines = append(lines, compose(w, body, m.rects[:], views[:])...)
	}

	for i := range m.warn.rows {
		line := ""
		if n := len(m.warn.all); n > 0 {
			line = m.warn.all[(m.warn.offset+i)%n]
		}
		lines = append(lines, fit(" "+line, w))
	}
	for _, f := range m.footer {
		lines = append(lines, fit(" "+f, w))
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}
