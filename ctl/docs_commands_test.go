package ctl

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameRealCommands: every rackfencectl command the operator's
// pages show (in code: an inline `…` span or a fenced block) is one
// rackfencectl has, so a renamed or imagined command does not reach a
// reader as an example.
func TestDocsNameRealCommands(t *testing.T) {
	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md")
	inline := regexp.MustCompile("`[^`]*`")
	cmd := regexp.MustCompile(`rackfencectl ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?(?: ([a-z][a-z-]*))?`)
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fenced := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			code := []string{line}
			if !fenced {
				code = inline.FindAllString(line, -1)
			}
			for _, c := range code {
				for _, m := range cmd.FindAllStringSubmatch(c, -1) {
					checked++
					if !isCommand(m[1], m[2], m[3]) {
						t.Errorf("%s:%d: %q names no rackfencectl command (rackfencectl --help lists them)", f, i+1, m[0])
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d rackfencectl commands found in the docs: is the pattern still right?", checked)
	}
}

// isCommand: the words start a command's path (one, two or three words;
// what follows may be an argument).
func isCommand(words ...string) bool {
	path := ""
	for _, w := range words {
		if w == "" {
			return false
		}
		path = strings.TrimSpace(path + " " + w)
		if _, ok := commands[path]; ok {
			return true
		}
	}
	return false
}
