package shell

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// TestCommandTails: an unknown program does not hide the command line its
// arguments hold (issue 14 item 11).
func TestCommandTails(t *testing.T) {
	t.Parallel()
	runCases(t, []ruleCase{
		{"rtk git reset --hard", ask, "git-reset-hard"},
		{"rtk git push --force", ask, "git-force-push"},
		{"mytool rm -rf /", deny, "disk-destroy"},
		{"mytool --verbose rm -rf src", ask, "recursive-delete"},
		{"./run.sh curl https://x", deny, "net-tool"},
		{"mytool exec /usr/bin/curl x", deny, "net-tool"},
		{"mytool python3 -c 'import socket'", deny, "interpreter-socket"},
		{"ansible all -m shell -a 'rm -rf /'", deny, "disk-destroy"},
		{"mytool 'git push --force'", ask, "git-force-push"},
		{"mytool cp x .git/hooks/pre-commit", ask, "protected-path"},
		{"rtk git config core.fsmonitor ./x", ask, "git-config-code"},
		// legitimate
		{"ruff format . && ruff check --fix .", allow, ""},
		{"echo git push --force && grep -r 'rm -rf' .", allow, ""},
		{"pytest -k rm tests/", allow, ""},
		{"hugo server --bind host", allow, ""},
		{"rtk git status", allow, ""},
		{"mytool init && mytool at noon && mytool history", allow, ""},
		{"terraform plan && just build", allow, ""},
	})
}

// TestTailHeadsCoverJudge keeps tailHeads in step with the names the
// analyzer judges: every case label of judge, judgeFamily and pkg is a tail
// head or explicitly excluded, and the lists are sorted for the search.
func TestTailHeadsCoverJudge(t *testing.T) {
	t.Parallel()
	for name, l := range map[string][]string{"tailHeads": tailHeads, "tailHeadsExcluded": tailHeadsExcluded, "dataPrograms": dataPrograms} {
		if !slices.IsSorted(l) {
			t.Errorf("%s is not sorted", name)
		}
	}
	fs := token.NewFileSet()
	var labels []string
	for _, fn := range []string{"judge.go", "pkg.go"} {
		f, err := parser.ParseFile(fs, fn, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !slices.Contains([]string{"judge", "judgeFamily", "pkg"}, fd.Name.Name) {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				sw, ok := n.(*ast.SwitchStmt)
				if !ok {
					return true
				}
				if id, ok := sw.Tag.(*ast.Ident); !ok || id.Name != "name" && id.Name != "fam" {
					return true
				}
				for _, s := range sw.Body.List {
					for _, e := range s.(*ast.CaseClause).List {
						if bl, ok := e.(*ast.BasicLit); ok {
							v, _ := strconv.Unquote(bl.Value)
							labels = append(labels, v)
						}
					}
				}
				return true
			})
		}
	}
	if len(labels) < 500 {
		t.Fatalf("found only %d judged names; the test no longer reads the switches", len(labels))
	}
	for _, l := range labels {
		if !slices.Contains(tailHeads, l) && !slices.Contains(tailHeadsExcluded, l) {
			t.Errorf("%q is judged but neither a tail head nor excluded", l)
		}
	}
}
