package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the dashboard answers, and drives the footer's help.
type KeyMap struct {
	Up     key.Binding // more load
	Down   key.Binding // less load
	Pause  key.Binding
	Reset  key.Binding
	Window key.Binding
	Focus  key.Binding
	// FocusBack moves the focus the other way; Back clears the focus and
	// closes the full help.
	FocusBack key.Binding
	// FocusPane focuses the n-th pane shown, for the digit n.
	FocusPane key.Binding
	Back      key.Binding
	Help      key.Binding
	Quit      key.Binding
	// Model selects the model the detailed panes show, in a run over
	// several models; off otherwise.
	Model key.Binding

	// Earlier and Later scroll the charts back through the history and
	// forward again (the wheel does the same with Options.Mouse); Live
	// returns them to now.
	Earlier key.Binding
	Later   key.Binding
	Live    key.Binding
	// Click and Wheel are the mouse's actions, for the full help only:
	// mouse events are not key presses and these are never matched.
	Click key.Binding
	Wheel key.Binding

	// Replay keys.
	ReplayPause key.Binding
	StepBack    key.Binding
	StepForward key.Binding
	Faster      key.Binding
	Slower      key.Binding
}

// NewKeyMap returns the key map for a live run (replay false) or a replay,
// where the load and reset keys are disabled and + and - change the
// playback speed.
func NewKeyMap(replay bool) *KeyMap {
	k := &KeyMap{
		Up:     key.NewBinding(key.WithKeys("up", "+", "="), key.WithHelp("↑/↓", "load")),
		Down:   key.NewBinding(key.WithKeys("down", "-", "_"), key.WithHelp("↓/-", "less load")),
		Pause:  key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Reset:  key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reset windows")),
		Window: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "window")),
		Focus:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "focus")),
		// shift+tab and esc are spoken of in the focus help, not listed.
		FocusBack: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "focus back")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "unfocus")),
		FocusPane: key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-9", "focus pane n")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Model:     key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "model"), key.WithDisabled()),
		Earlier:   key.NewBinding(key.WithKeys("["), key.WithHelp("[/]", "scroll history")),
		Later:     key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "scroll forward")),
		Live:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end", "live charts")),
		Click:     key.NewBinding(key.WithKeys("click"), key.WithHelp("click", "focus pane"), key.WithDisabled()),
		Wheel:     key.NewBinding(key.WithKeys("wheel"), key.WithHelp("wheel", "scroll history"), key.WithDisabled()),

		ReplayPause: key.NewBinding(key.WithKeys("space", "p"), key.WithHelp("space", "pause")),
		StepBack:    key.NewBinding(key.WithKeys("left"), key.WithHelp("←/→", "step")),
		StepForward: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "step forward")),
		Faster:      key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+/-", "speed")),
		Slower:      key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "slower")),
	}
	off := []*key.Binding{&k.ReplayPause, &k.StepBack, &k.StepForward, &k.Faster, &k.Slower}
	if replay {
		// A replay's windows are the ones recorded: nothing to reset.
		off = []*key.Binding{&k.Up, &k.Down, &k.Pause, &k.Reset}
	}
	for _, b := range off {
		b.SetEnabled(false)
	}
	return k
}

// ShortHelp is the one-line hint for newcomers.
func (k *KeyMap) ShortHelp() []key.Binding {
	if k.Up.Enabled() {
		return []key.Binding{k.Up, k.Pause, k.Model, k.Window, k.Focus, k.Help, k.Quit}
	}
	return []key.Binding{k.ReplayPause, k.StepBack, k.Faster, k.Model, k.Window, k.Focus, k.Help, k.Quit}
}

// enableMouse turns on the mouse's entries in the help.
func (k *KeyMap) enableMouse() {
	for _, b := range []*key.Binding{&k.Click, &k.Wheel} {
		b.SetEnabled(true)
	}
}

// FullHelp is the help shown after ?.
func (k *KeyMap) FullHelp() [][]key.Binding {
	full := *k
	full.Up.SetHelp("↑/+", "more load")
	full.StepBack.SetHelp("←", "step back")
	full.Faster.SetHelp("+", "faster")
	full.Earlier.SetHelp("[", "scroll history back")
	return [][]key.Binding{
		{full.Up, full.Down, full.Pause},
		{full.ReplayPause, full.StepBack, full.StepForward, full.Faster, full.Slower},
		{full.Reset, full.Window, full.Focus, full.FocusPane, full.Model},
		{full.Earlier, full.Later, full.Live, full.Click, full.Wheel},
		{full.Help, full.Quit},
	}
}
