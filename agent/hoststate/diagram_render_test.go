package hoststate

import (
	"fmt"
	"strings"
)

//go:generate go test -run TestDiagramUpToDate -update .

// Diagram renders the transition table as Markdown: a Mermaid state
// diagram of every row that changes the provisioning state or removes the
// record, then every row in table order. docs/hoststate.md is this text; a
// test fails when it is out of date (go generate ./agent/hoststate rewrites
// it).
func Diagram() string {
	var b strings.Builder
	b.WriteString("# Host state machine\n\n")
	b.WriteString("<!-- Generated from agent/hoststate/table.go by `go generate ./agent/hoststate`. Do not edit. -->\n\n")
	b.WriteString("Every transition is one row of `agent/hoststate/table.go`. `[*]` on the left is a new host,\n")
	b.WriteString("on the right a deleted record; `any` stands for every state. Operational status, errors and\n")
	b.WriteString("intents that do not change the provisioning state appear only in the rule list below.\n\n")
	b.WriteString("```mermaid\nstateDiagram-v2\n")
	used := map[string]bool{}
	var edges []string
	for _, w := range table {
		if w.to == "" && !w.remove {
			continue
		}
		froms := w.from
		if froms == nil {
			froms = []string{"any"}
		}
		label := w.name
		if w.on != "" && w.on != anyAction {
			label += fmt.Sprintf(" (%s %s)", w.on, w.res)
		}
		for _, f := range froms {
			if f == w.to {
				continue
			}
			src := mermaidID(f, used)
			dst := "[*]"
			if !w.remove {
				dst = mermaidID(w.to, used)
			}
			edges = append(edges, fmt.Sprintf("    %s --> %s : %s\n", src, dst, label))
		}
	}
	for _, s := range diagramStates {
		if used[s] {
			fmt.Fprintf(&b, "    state \"%s\" as %s\n", s, mermaidAlias(s))
		}
	}
	for _, e := range edges {
		b.WriteString(e)
	}
	b.WriteString("```\n\n## Rules, in table order\n\n")
	b.WriteString("Outcome rows (with an action) handle the result of the last action; the first match applies.\n")
	b.WriteString("Decision rows follow in order; a row marked ↓ lets the next rows run too.\n\n")
	b.WriteString("| # | rule | outcome of | in states | → | why |\n|---|---|---|---|---|---|\n")
	for i, w := range table {
		on := ""
		if w.on != "" {
			on = fmt.Sprintf("%s %s", w.on, w.res)
		}
		from := "any"
		if w.from != nil {
			names := make([]string, len(w.from))
			for j, s := range w.from {
				names[j] = stateName(s)
			}
			from = strings.Join(names, ", ")
		}
		to := stateName(w.to)
		if w.to == "" {
			to = ""
		}
		if w.remove {
			to = "removed"
		}
		name := w.name
		if w.next {
			name += " ↓"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, name, on, from, to, strings.ReplaceAll(w.why, "|", "\\|"))
	}
	return b.String()
}

// diagramStates are the states with a Mermaid alias, in lifecycle order.
var diagramStates = []string{
	sUnmanaged, sRegistering, sInspecting, sAvailable, sProvisionin, sProvisioned,
	sExternal, sDeprovision, sPowerOffDel, sDeleting, "any",
}

// mermaidID is a row's source or target in the diagram: the new state is
// Mermaid's start [*] (no row leads back to it).
func mermaidID(s string, used map[string]bool) string {
	if s == "" {
		return "[*]"
	}
	used[s] = true
	return mermaidAlias(s)
}

// mermaidAlias is a state's Mermaid identifier ("any" is a keyword-like
// name, so it gets a suffix).
func mermaidAlias(s string) string {
	if s == "any" {
		return "any_state"
	}
	return strings.ReplaceAll(s, "-", "_")
}

func stateName(s string) string {
	if s == "" {
		return "new"
	}
	return s
}
