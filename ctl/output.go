package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// Output formats of -o.
const (
	OutTable = "table"
	OutJSON  = "json"
	OutYAML  = "yaml"
	// OutBMH is host export's metal3 BareMetalHost + Secret documents.
	OutBMH = "bmh"
)

func checkOutput(o string) error {
	switch o {
	case OutTable, OutJSON, OutYAML:
		return nil
	}
	if o == OutBMH {
		return fmt.Errorf("-o bmh is only for 'host export': use table, json or yaml")
	}
	return fmt.Errorf("-o %q is not an output format: use table, json or yaml", o)
}

// structured reports whether -o asks for JSON or YAML.
func (x *Ctx) structured() bool { return x.g.output != OutTable }

// print writes v as JSON or YAML (exactly the API's object), or calls
// table for -o table.
func (x *Ctx) print(v any, table func(w io.Writer)) error {
	return printTo(x.io.Stdout, x.g.output, v, table)
}

func printTo(w io.Writer, format string, v any, table func(w io.Writer)) error {
	switch format {
	case OutJSON:
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case OutYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	table(w)
	return nil
}

// table is a list printed in aligned columns, two spaces apart. When width
// is set, the last column is cut so that lines fit.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	t.rows = append(t.rows, cells)
}

func (t *table) write(w io.Writer, width int) {
	all := append([][]string{t.header}, t.rows...)
	writeRows(w, all, t.widths(nil), width)
}

// widths are the columns' widths: at least from's, wide enough for the
// header and every row.
func (t *table) widths(from []int) []int {
	n := len(t.header)
	widths := make([]int, n)
	copy(widths, from)
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i := 0; i < n && i < len(r); i++ {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	return widths
}

// writeRows writes rows in columns of widths, the last cut to fit width
// (when set).
func writeRows(w io.Writer, all [][]string, widths []int, width int) {
	n := len(widths)
	last := -1
	if width > 0 {
		used := 0
		for i := 0; i < n-1; i++ {
			used += widths[i] + 2
		}
		last = max(width-used, 12)
	}
	var b strings.Builder
	for _, r := range all {
		b.Reset()
		for i := 0; i < n; i++ {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			if i == n-1 {
				if last > 0 {
					c = cut(c, last)
				}
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", max(widths[i]-utf8.RuneCountInString(c), 0)+2))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// cut shortens s to n runes, marking the cut with "...".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n <= 3 {
		return string(r[:n])
	}
	return string(r[:n-3]) + "..."
}

// tableWidth is the width tables are cut to: the terminal's, or none when
// stdout is not a terminal (pipes get whole lines).
func (x *Ctx) tableWidth() int {
	if !x.io.IsTerminal(x.io.Stdout) {
		return 0
	}
	return x.io.Width(x.io.Stdout)
}

// kv prints "Key:  value" lines aligned on the values.
type kv struct{ rows [][2]string }

func (k *kv) add(key, value string) {
	if value == "" {
		value = "-"
	}
	k.rows = append(k.rows, [2]string{key, value})
}

// more adds a continuation line under the previous key.
func (k *kv) more(value string) { k.rows = append(k.rows, [2]string{"", value}) }

func (k *kv) write(w io.Writer) {
	wd := 0
	for _, r := range k.rows {
		wd = max(wd, len(r[0]))
	}
	for _, r := range k.rows {
		key := r[0]
		if key != "" {
			key += ":"
		}
		fmt.Fprintf(w, "%-*s  %s\n", wd+1, key, r[1])
	}
}
