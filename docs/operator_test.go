package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func operatorGuide(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("operator.md")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// slug is GitHub's anchor of a heading: lower case, punctuation dropped
// (but - and _), spaces to dashes.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestOperatorAnchorsExist: every [text](#anchor) of the operator guide
// (the first-day walk-through links into the reference this way) names a
// heading of the guide.
func TestOperatorAnchorsExist(t *testing.T) {
	lines := operatorGuide(t)
	anchors := map[string]bool{}
	inCode := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if !inCode && strings.HasPrefix(l, "#") {
			anchors[slug(strings.TrimLeft(l, "#"))] = true
		}
	}
	link := regexp.MustCompile(`\]\(#([^)]+)\)`)
	n := 0
	for i, l := range lines {
		for _, m := range link.FindAllStringSubmatch(l, -1) {
			n++
			if !anchors[m[1]] {
				t.Errorf("operator.md:%d: link to #%s, which no heading has", i+1, m[1])
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d anchor links found", n)
	}
}

// TestOperatorTablesHaveHeaders: a table starts with a header row and its
// separator, so a blank line inside a table (which starts a second,
// headerless one that renders as text) is caught; and the commands table
// lists each command once.
func TestOperatorTablesHaveHeaders(t *testing.T) {
	lines := operatorGuide(t)
	sep := regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`)
	inCode := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(l, "|") || (i > 0 && strings.HasPrefix(lines[i-1], "|")) {
			continue
		}
		if i+1 >= len(lines) || !sep.MatchString(lines[i+1]) {
			t.Errorf("operator.md:%d: a table row with no header and separator above it (a blank line inside a table?): %.60s", i+1, l)
		}
	}
	// A command is its words and required arguments, up to the first
	// optional one ("credentials set NAME --username U" and "credentials
	// set NAME --from-file KEY=PATH" are two forms; "token create --role
	// …" twice is a duplicate), in the first table of "## Commands".
	seen := map[string]int{}
	state := 0 // 0 before "## Commands", 1 in it, 2 in its table, 3 past
	cell := regexp.MustCompile("^\\| `([^`]*)`")
	for i, l := range lines {
		switch {
		case state == 0 && l == "## Commands":
			state = 1
		case state == 1 && strings.HasPrefix(l, "|"):
			state = 2
		case state == 2 && !strings.HasPrefix(l, "|"):
			state = 3
		}
		if state != 2 {
			continue
		}
		m := cell.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		key, _, _ := strings.Cut(m[1], " [")
		if first, dup := seen[key]; dup {
			t.Errorf("operator.md:%d: %q is in the commands table twice (first at line %d)", i+1, key, first)
		}
		seen[key] = i + 1
	}
	if len(seen) < 15 {
		t.Fatalf("only %d commands found in the commands table", len(seen))
	}
}

// staleClaims are sentences the code no longer bears out.
var staleClaims = []string{
	"virtual media is not used", // the direct provisioner boots Redfish hosts over virtual media
}

func TestOperatorNoStaleClaims(t *testing.T) {
	for i, l := range operatorGuide(t) {
		for _, c := range staleClaims {
			if strings.Contains(l, c) {
				t.Errorf("operator.md:%d: %q is no longer true", i+1, c)
			}
		}
	}
}
