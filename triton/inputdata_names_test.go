package triton

import (
	"strings"
	"testing"
)

// TestInputDataUnknownInputs: a data set that gives an input the model
// lacks is refused in one line naming it and the model's inputs, and
// nothing else is refused for it.
func TestInputDataUnknownInputs(t *testing.T) {
	md, cfg := simpleModel()
	both := `"INPUT0":` + seq(0, 16) + `,"INPUT1":` + seq(0, 16)
	for _, c := range []struct {
		name, json, want string
	}{
		{"exact inputs pass", `{"data":[{` + both + `}]}`, ""},
		{"one extra", `{"data":[{` + both + `,"INPUT2":[1]}]}`,
			"data set 1 gives input 'INPUT2', which model 'simple' does not have (its inputs: INPUT0, INPUT1)"},
		{"two extra, sorted", `{"data":[{` + both + `,"Z":[1],"A":[1]}]}`,
			"data set 1 gives inputs 'A', 'Z', which model 'simple' does not have"},
		{"extra in the second set", `{"data":[{` + both + `},{` + both + `,"input0":[1]}]}`,
			"data set 2 gives input 'input0'"},
		{"extra instead of one", `{"data":[{"INPUT0":` + seq(0, 16) + `,"INPUT_1":[1]}]}`,
			"data set 1 gives input 'INPUT_1'"},
		{"control characters escaped", `{"data":[{` + both + `,"\u001b[2J":[1]}]}`,
			`gives input '\x1b[2J'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := BuildRequests(md, cfg, InputOptions{Data: writeJSON(t, c.json)})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || strings.ContainsRune(err.Error(), 0x1b) {
				t.Fatalf("err = %v; want one clean line containing %q", err, c.want)
			}
		})
	}
}
