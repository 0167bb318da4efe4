package docs

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// root is the repository root (this package is docs/).
const root = ".."

// skipDirs are never scanned: git's, build output, and what tests and the
// demo leave behind.
var skipDirs = map[string]bool{".git": true, "bin": true, "dist": true, ".demo": true, "rackfence-data": true}

// repoFiles calls fn with the path (relative to root, slash-separated) and
// content of every text file of the repository.
func repoFiles(t *testing.T, fn func(rel string, data []byte)) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > 4<<20 {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data, 0) >= 0 {
			return nil // binary
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		n++
		fn(filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("scanned only %d files under %s: is this the repository?", n, root)
	}
}

// outside names documents that live outside the repository (the team's
// design notes and proposals). Spelled in pieces so this file does not
// name them itself.
var outside = regexp.MustCompile(`(?i)\b(` + "CON" + `TRACT\.md|` + "PI" + `NS\.md|` + "PE" + `ERS\.md|` +
	"hand" + `book|` + "see" + `ds/|` + "/work" + `/shared)`)

// upPath is a relative path climbing out of its file's directory.
var upPath = regexp.MustCompile("(?:^|[\\s\"'`(\\[])((?:\\.\\./)+[\\w.\\-/]*)")

// bareDesign is "DESIGN.md" without a directory: the page of the file's
// own directory.
var bareDesign = regexp.MustCompile("(?:^|[^\\w/.-])DESIGN\\.md")

// TestNoPointersOutsideRepo: nothing in the repository points to a file
// outside it (a bare "DESIGN.md" must be the page beside the file). docs/api.md, docs/operator.md and the package DESIGN.md
// pages are the reference; code comments may name a seed ("seed 004")
// as the origin of a rule, never a path to it.
func TestNoPointersOutsideRepo(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	repoFiles(t, func(rel string, data []byte) {
		for i, line := range strings.Split(string(data), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d names %q, which is not in the repository: point to docs/api.md, docs/operator.md or a DESIGN.md page instead", rel, i+1, m)
			}
			if bareDesign.MatchString(line) && rel != "docs/docs_test.go" {
				if _, err := os.Stat(filepath.Join(abs, filepath.FromSlash(filepath.Dir(rel)), "DESIGN.md")); err != nil {
					t.Errorf("%s:%d names DESIGN.md, but %s has none: name the page with its directory (agent/DESIGN.md), or docs/api.md, docs/operator.md", rel, i+1, filepath.Dir(rel))
				}
			}
			for _, m := range upPath.FindAllStringSubmatch(line, -1) {
				target := filepath.Join(abs, filepath.FromSlash(filepath.Dir(rel)), filepath.FromSlash(m[1]))
				if r, err := filepath.Rel(abs, target); err != nil || r == ".." || strings.HasPrefix(r, "../") {
					t.Errorf("%s:%d: %q leads outside the repository", rel, i+1, m[1])
				}
			}
		}
	})
}

// history is design history that means nothing to an operator: our
// proposal documents ("seed 003"), issue numbers ("issue 14", "#21"), the
// name of the project a rule was taken from ("BMO:").
var history = regexp.MustCompile(`(?i)\bseeds? ?\d|\bissue ?#?\d|(?:^|[^&\w])#\d\d\b|\bBMO:|\bISSUE-\d`)

// operatorDocs are the documents an operator reads, with the ctl goldens
// (what rackfencectl prints, --help included).
var operatorDocs = []string{"README.md", "docs/operator.md", "docs/api.md", "docs/hoststate.md", "coordinator/api/openapi.yaml"}

// TestOperatorTextNamesNoHistory: host events, errors, --help, logs and
// the operator's documents say what happened and what to do; which seed
// or issue a rule came from stays in code comments and DESIGN pages. It
// scans the operator documents, ctl's goldens and every string literal of
// the module's Go code outside tests (event reasons and messages, the
// state machine's rules, errors, flag help, log lines).
func TestOperatorTextNamesNoHistory(t *testing.T) {
	check := func(where, text string) {
		if m := history.FindString(text); m != "" {
			t.Errorf("%s: %q names design history an operator cannot look up: say what happened and what to do (the origin goes in a code comment)", where, m)
		}
	}
	for _, d := range operatorDocs {
		data, err := os.ReadFile(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			check(d+":"+strconv.Itoa(i+1), line)
		}
	}
	goldens, err := filepath.Glob(filepath.Join(root, "ctl", "testdata", "*.txt"))
	if err != nil || len(goldens) < 10 {
		t.Fatalf("ctl goldens: %d found (%v)", len(goldens), err)
	}
	for _, g := range goldens {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		check(filepath.ToSlash(g), string(data))
	}
	lits := 0
	repoFiles(t, func(rel string, data []byte) {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.Contains(rel, "testdata/") {
			return
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, rel, data, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
				lits++
				if s, err := strconv.Unquote(bl.Value); err == nil {
					check(fset.Position(bl.Pos()).String(), s)
				}
			}
			return true
		})
	})
	if lits < 1000 {
		t.Fatalf("found only %d string literals in the module's Go code", lits)
	}
}

// namedFile is a file name written as code in a Markdown page.
var namedFile = regexp.MustCompile("`([\\w./-]+\\.(?:go|md|sh|bin|tgz))`")

// TestNamedFilesExist: every file a Markdown page names as code exists,
// relative to the page, to the repository root, or (a bare name) in the
// page's directory tree, so a newcomer finds every file a page names.
func TestNamedFilesExist(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	repoFiles(t, func(rel string, data []byte) {
		if !strings.HasSuffix(rel, ".md") || strings.Contains(rel, "testdata/") {
			return
		}
		pages++
		dir := filepath.Join(abs, filepath.FromSlash(filepath.Dir(rel)))
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range namedFile.FindAllStringSubmatch(line, -1) {
				name := filepath.FromSlash(m[1])
				if exists(filepath.Join(dir, name)) || exists(filepath.Join(abs, name)) ||
					(!strings.Contains(m[1], "/") && foundUnder(dir, name)) {
					continue
				}
				t.Errorf("%s:%d names %s, which does not exist: fix the name or the page", rel, i+1, m[1])
			}
		}
	})
	if pages < 10 {
		t.Fatalf("only %d Markdown pages found", pages)
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// foundUnder reports whether a file called name is somewhere under dir.
func foundUnder(dir, name string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipAll
		}
		if d.IsDir() && skipDirs[d.Name()] {
			return filepath.SkipDir
		}
		if d.Name() == name {
			found = true
		}
		return nil
	})
	return found
}

// flowRow is a row of docs/flow.md's table: number, file, function, the
// step it is called from (empty: another process, a queue or a table
// hands it over), what happens.
var flowRow = regexp.MustCompile("^\\| (\\d+) \\| `([\\w./-]+\\.go)` \\| `(?:(\\w+)\\.)?(\\w+)` \\| ?(\\d*) \\| (.*) \\|$")

// TestFlowNamesExist keeps docs/flow.md true to the code: every file its
// table names exists and declares the function (or Type.Method) named
// beside it, and the steps come in the order the page says
// (checkFlowOrder). Moving or renaming one fails here: update the page.
func TestFlowNamesExist(t *testing.T) {
	data, err := os.ReadFile("flow.md")
	if err != nil {
		t.Fatal(err)
	}
	var steps []flowStep
	for i, line := range strings.Split(string(data), "\n") {
		m := flowRow.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| #") {
				t.Errorf("flow.md:%d: a table row this test cannot read: %q", i+1, line)
			}
			continue
		}
		st := flowStep{line: i + 1, num: m[1], file: m[2], recv: m[3], fn: m[4], from: m[5], text: m[6]}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(st.file)))
		if err != nil {
			t.Errorf("flow.md:%d: step %s names %s: %v", i+1, m[1], st.file, err)
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), st.file, src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("flow.md:%d: %s: %v", i+1, st.file, err)
			continue
		}
		st.decl = declared(f, st.recv, st.fn)
		if st.decl == nil {
			t.Errorf("flow.md:%d: step %s: %s declares no %s (moved or renamed? update docs/flow.md)", i+1, m[1], st.file, st.name())
		}
		steps = append(steps, st)
	}
	if len(steps) < 20 {
		t.Fatalf("flow.md: only %d steps read from its table", len(steps))
	}
	checkFlowOrder(t, steps)
}

// declared is f's declaration of function fn, or of method fn of type
// recv (pointer receiver or not) when recv is not empty; nil if none.
func declared(f *ast.File, recv, fn string) *ast.FuncDecl {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			continue
		}
		if recv == "" {
			if fd.Recv == nil {
				return fd
			}
			continue
		}
		if fd.Recv != nil && len(fd.Recv.List) > 0 && recvName(fd) == recv {
			return fd
		}
	}
	return nil
}

// recvName is the type name of fd's receiver ("" for a function).
func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	e := fd.Recv.List[0].Type
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// sectionRef is a page named with one of its sections in quotes:
// docs/operator.md, "Secrets key"; agent/DESIGN.md ("Known limit").
var sectionRef = regexp.MustCompile("((?:[\\w.-]+/)*(?:DESIGN|operator|api|performance|hoststate|flow)\\.md)`?,? \\(?\"([^\"]+)\"")

// TestSectionReferencesExist: a page named with a section in quotes has
// that section (the quoted words appear in it), so a pointer does not
// outlive the text it points to.
func TestSectionReferencesExist(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	refs := 0
	repoFiles(t, func(rel string, data []byte) {
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range sectionRef.FindAllStringSubmatch(line, -1) {
				page := filepath.FromSlash(m[1])
				var cands []string
				switch {
				case strings.Contains(m[1], "/"):
					cands = []string{filepath.Join(abs, page), filepath.Join(abs, "docs", page)}
				case m[1] == "DESIGN.md":
					cands = []string{filepath.Join(abs, filepath.FromSlash(filepath.Dir(rel)), page)}
				default:
					cands = []string{filepath.Join(abs, "docs", page)}
				}
				var text []byte
				for _, c := range cands {
					if b, err := os.ReadFile(c); err == nil {
						text = b
						break
					}
				}
				if text == nil {
					t.Errorf("%s:%d: %s: no such page", rel, i+1, m[1])
					continue
				}
				refs++
				if !strings.Contains(strings.ToLower(string(text)), strings.ToLower(m[2])) {
					t.Errorf("%s:%d: %s has no section %q: point to the section it has now", rel, i+1, m[1], m[2])
				}
			}
		}
	})
	if refs < 5 {
		t.Fatalf("only %d section references found", refs)
	}
}

// maxDesignLines keeps a package's design page short enough to read in
// ten minutes: today's decisions and trade-offs; figures go to
// docs/performance.md and history to git and CHANGELOG.md.
const maxDesignLines = 400

// TestDesignPagesShort fails on a DESIGN.md longer than maxDesignLines.
func TestDesignPagesShort(t *testing.T) {
	pages := 0
	repoFiles(t, func(rel string, data []byte) {
		if filepath.Base(rel) != "DESIGN.md" {
			return
		}
		pages++
		if n := strings.Count(string(data), "\n"); n > maxDesignLines {
			t.Errorf("%s has %d lines (at most %d): keep today's decisions; move figures to docs/performance.md and history to git", rel, n, maxDesignLines)
		}
	})
	if pages < 10 {
		t.Fatalf("only %d DESIGN.md pages found", pages)
	}
}
