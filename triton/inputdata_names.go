package triton

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// maxListedNames is how many of a data set's unknown inputs a message names.
const maxListedNames = 8

// checkDataInputs refuses an --input-data file that gives an input the
// model does not have: such values would otherwise be dropped without a
// word, and the run would measure data other than the user meant.
// names are the model's inputs, in its metadata's order.
func checkDataInputs(data *InputData, model string, names []string) error {
	for i, set := range data.Sets {
		extra := make([]string, 0, 1)
		for name := range set {
			if !slices.Contains(names, name) {
				extra = append(extra, name)
			}
		}
		if len(extra) == 0 {
			continue
		}
		slices.Sort(extra)
		quoted := make([]string, 0, min(len(extra), maxListedNames))
		for _, e := range extra[:min(len(extra), maxListedNames)] {
			quoted = append(quoted, "'"+textsafe.Bound(e)+"'")
		}
		if len(extra) > maxListedNames {
			quoted = append(quoted, fmt.Sprintf("… (%d in all)", len(extra)))
		}
		what := "input " + quoted[0] + ", which model '" + textsafe.Bound(model) + "' does not have"
		if len(extra) > 1 {
			what = "inputs " + strings.Join(quoted, ", ") + ", which model '" + textsafe.Bound(model) + "' does not have"
		}
		return fmt.Errorf("input data %s: data set %d gives %s (its inputs: %s); rename or remove it", textsafe.Line(data.Source), i+1, what, textsafe.Line(strings.Join(names, ", ")))
	}
	return nil
}
