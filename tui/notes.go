package tui

import (
	"slices"

	tea "charm.land/bubbletea/v2"
)

// oneModelNote is what m says in a run of one model, where it has no
// model to switch to.
const oneModelNote = "one model: m switches models in a run of several"

// unusedKeyNote says why a key that matched no enabled binding did
// nothing, for the keys that do something in other runs: m with one model.
// Other keys get no word.
func unusedKeyNote(k *KeyMap, msg tea.KeyPressMsg) string {
	if !k.Model.Enabled() && slices.Contains(k.Model.Keys(), msg.String()) {
		return oneModelNote
	}
	return ""
}
