package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteText writes the comparison as a terminal table: a line naming each
// run, then one row per metric of each matched level and of the whole
// runs, with A, B and the change from A to B.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A  %s: %s\n", c.A.Label, c.A.describe())
	fmt.Fprintf(&b, "B  %s: %s\n\n", c.B.Label, c.B.describe())
	rows := [][]string{{"load", "metric", c.A.Label, c.B.Label, "change"}}
	for _, lc := range c.levels() {
		for i, m := range lc.Metrics {
			level := ""
			if i == 0 {
				level = lc.Level
			}
			rows = append(rows, []string{level, m.heading(), m.cell(m.A), m.cell(m.B), m.percentCell()})
		}
	}
	var table strings.Builder
	writeTable(&table, "", rows)
	// A blank line before each level keeps its rows together.
	for i, l := range strings.SplitAfter(table.String(), "\n") {
		if i > 1 && l != "" && l[0] != ' ' {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	if notes := c.notes(); len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	return nil
}

// WriteMarkdown writes the comparison as a Markdown table, for an issue, a
// pull request or a wiki page.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**A** %s: %s  \n", mdText(c.A.Label), mdText(c.A.describe()))
	fmt.Fprintf(&b, "**B** %s: %s\n\n", mdText(c.B.Label), mdText(c.B.describe()))
	b.WriteString("| load | metric | " + mdCell(c.A.Label) + " | " + mdCell(c.B.Label) + " | change |\n")
	b.WriteString("|---|---|---:|---:|---:|\n")
	for _, lc := range c.levels() {
		for i, m := range lc.Metrics {
			level := ""
			if i == 0 {
				level = mdCell(lc.Level)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", level, mdCell(m.heading()), m.cell(m.A), m.cell(m.B), m.percentCell())
		}
	}
	if notes := c.notes(); len(notes) > 0 {
		b.WriteString("\n")
		for _, l := range notes {
			b.WriteString(mdText(l) + "  \n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	return nil
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
	return fmt.Sprintf("%s on %s (%s), %s, %s", model, orDash(r.URL), orDash(r.Protocol), steps, r.Duration.Round(100*time.Millisecond))
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(mdText(s), "|", `\|`)
}

// mdText escapes the characters that would start Markdown emphasis, code
// or HTML in running text.
func mdText(s string) string {
	return mdEscaper.Replace(s)
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
