package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardDocNamesActionsAndFilters: the guide's Dashboard section
// names every action button the page has and every intent kind its
// filter takes, read from the page's own script.
func TestDashboardDocNamesActionsAndFilters(t *testing.T) {
	js, err := os.ReadFile("../coordinator/ui/static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	var section strings.Builder
	in := false
	for _, l := range operatorGuide(t) {
		if strings.HasPrefix(l, "## ") {
			in = l == "## Dashboard"
		}
		if in {
			section.WriteString(l + "\n")
		}
	}
	doc := strings.Join(strings.Fields(section.String()), " ")
	if doc == "" {
		t.Fatal(`operator.md has no "## Dashboard" section`)
	}
	labels := regexp.MustCompile(`label: '([A-Za-z ]+)…?'`).FindAllStringSubmatch(string(js), -1)
	if len(labels) < 5 {
		t.Fatalf("only %d action labels found in app.js", len(labels))
	}
	for _, m := range labels {
		if !strings.Contains(doc, m[1]) {
			t.Errorf("the Dashboard section does not name the %s action", m[1])
		}
	}
	kinds := regexp.MustCompile(`const INTENT_KINDS = \[([^\]]*)\]`).FindStringSubmatch(string(js))
	if kinds == nil {
		t.Fatal("no INTENT_KINDS in app.js")
	}
	filter := regexp.MustCompile("an intent kind \\(([^)]*)\\)").FindStringSubmatch(doc)
	if filter == nil {
		t.Fatal(`the Dashboard section does not list the filter's intent kinds ("an intent kind (...)")`)
	}
	for _, k := range strings.Split(kinds[1], ",") {
		k = strings.Trim(strings.TrimSpace(k), "'")
		if !strings.Contains(filter[1], "`"+k+"`") {
			t.Errorf("the filter takes intent kind %q, which the Dashboard section's list (%s) lacks", k, filter[1])
		}
	}
}
