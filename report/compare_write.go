package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// WriteText writes the comparison as a terminal table: a line naming each
// run, then one row per metric of each matched level and of the whole
// runs, with A, B and the change from A to B.
// A comparison of several models has a table per model, then the whole
// runs'; one of two runs over several replicas ends with a table of the
// replicas.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A  %s: %s\n", c.A.Label, c.A.describe())
	fmt.Fprintf(&b, "B  %s: %s\n\n", c.B.Label, c.B.describe())
	for _, mc := range c.Models {
		fmt.Fprintf(&b, "Model %s\n", mc.Model)
		mc.writeTable(&b)
		b.WriteString("\n")
	}
	if len(c.Models) > 0 {
		b.WriteString("All models\n")
	}
	c.writeTable(&b)
	c.writeReplicaTable(&b)
	c.writeFailIf(&b, false)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	return nil
}

// writeTable is the text table of the matched levels and the whole runs,
// and the notes.
func (c *Comparison) writeTable(b *strings.Builder) {
	rows := [][]string{{"load", "metric", c.A.Label, c.B.Label, "change", "noise"}}
	for _, lc := range c.levels() {
		for i, m := range lc.Metrics {
			level := ""
			if i == 0 {
				level = lc.Level
			}
			rows = append(rows, []string{level, m.heading(), m.cell(m.A), m.cell(m.B), m.percentCell(), m.noiseCell()})
		}
	}
	writeGroupedTable(b, rows, append(c.notes(), c.noiseNotes()...))
}

// writeGroupedTable writes a comparison table whose groups (a level, a
// replica) start with a row that names them in the first column, with a
// blank line before each group to keep its rows together, and the notes
// after.
func writeGroupedTable(b *strings.Builder, rows [][]string, notes []string) {
	var table strings.Builder
	writeTable(&table, "", rows)
	for i, l := range strings.SplitAfter(table.String(), "\n") {
		if i > 1 && l != "" && l[0] != ' ' {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
}

// WriteMarkdown writes the comparison as a Markdown table, for an issue, a
// pull request or a wiki page; the replicas' table follows as in WriteText.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**A** %s: %s  \n", mdText(c.A.Label), mdText(c.A.describe()))
	fmt.Fprintf(&b, "**B** %s: %s\n\n", mdText(c.B.Label), mdText(c.B.describe()))
	for _, mc := range c.Models {
		fmt.Fprintf(&b, "**Model %s**\n\n", mdText(mc.Model))
		mc.writeMarkdownTable(&b)
		b.WriteString("\n")
	}
	if len(c.Models) > 0 {
		b.WriteString("**All models**\n\n")
	}
	c.writeMarkdownTable(&b)
	c.writeMarkdownReplicaTable(&b)
	c.writeFailIf(&b, true)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	return nil
}

// writeMarkdownTable is the Markdown table of the matched levels and the
// whole runs, and the notes.
func (c *Comparison) writeMarkdownTable(b *strings.Builder) {
	b.WriteString("| load | metric | " + mdCell(c.A.Label) + " | " + mdCell(c.B.Label) + " | change | noise |\n")
	b.WriteString("|---|---|---:|---:|---:|---|\n")
	for _, lc := range c.levels() {
		for i, m := range lc.Metrics {
			level := ""
			if i == 0 {
				level = mdCell(lc.Level)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", level, mdCell(m.heading()), m.cell(m.A), m.cell(m.B), m.percentCell(), mdCell(m.noiseCell()))
		}
	}
	if notes := append(c.notes(), c.noiseNotes()...); len(notes) > 0 {
		b.WriteString("\n")
		for _, l := range notes {
			b.WriteString(mdText(l) + "  \n")
		}
	}
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("report: write comparison JSON: %w", err)
	}
	return nil
}

// levels are the matched levels, then the whole runs.
func (c *Comparison) levels() []LevelComparison {
	return append(append([]LevelComparison(nil), c.Steps...), c.Overall)
}

// notes say which levels only one run measured, and how to read the whole
// run of a sweep.
func (c *Comparison) notes() []string {
	var out []string
	if len(c.OnlyA) > 0 {
		out = append(out, "Only in "+c.A.Label+": "+strings.Join(c.OnlyA, ", "))
	}
	if len(c.OnlyB) > 0 {
		out = append(out, "Only in "+c.B.Label+": "+strings.Join(c.OnlyB, ", "))
	}
	if len(c.OnlyAModels) > 0 {
		out = append(out, "Models only in "+c.A.Label+": "+strings.Join(c.OnlyAModels, ", "))
	}
	if len(c.OnlyBModels) > 0 {
		out = append(out, "Models only in "+c.B.Label+": "+strings.Join(c.OnlyBModels, ", "))
	}
	if len(c.Models) > 0 {
		// The models' tables compare the levels; this one the whole runs.
		return append(out, "The whole runs pool every model.")
	}
	if len(c.Steps) == 0 {
		out = append(out, "No load level in common: only the whole runs are compared.")
	}
	if c.A.Steps > 1 || c.B.Steps > 1 {
		out = append(out, "The whole run pools every level; the rows per level are the ones to compare.")
	}
	return out
}

// describe is a run in a few words: "resnet50 v1 on 127.0.0.1:8001 (gRPC),
// 4 steps, 16s".
func (r ComparedRun) describe() string {
	model := orDash(r.Model)
	if r.Version != "" {
		model += " v" + r.Version
	}
	steps := "1 step"
	if r.Steps != 1 {
		steps = fmt.Sprintf("%d steps", r.Steps)
	}
	out := fmt.Sprintf("%s on %s (%s), %s, %s", model, orDash(r.URL), orDash(r.Protocol), steps, r.Duration.Round(100*time.Millisecond))
	if r.Paused > 0 {
		out += fmt.Sprintf(", paused %s (left out of its rates)", r.Paused.Round(100*time.Millisecond))
	}
	if r.Retries > 0 {
		out += fmt.Sprintf(", %d retries", r.Retries)
	}
	if r.Simulated {
		out += "; " + SimulatedNote
	}
	return out
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(mdText(s), "|", `\|`)
}

// mdText escapes the characters that would start Markdown emphasis, code
// or HTML in running text, after textsafe.Line has shown its control
// characters escaped (a string from a run file or a server).
func mdText(s string) string {
	return mdEscaper.Replace(textsafe.Line(s))
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
