package termsafe_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
)

// printingPackages are the packages whose output reaches a terminal, with
// the functions in each that return text already made safe (each must
// call termsafe or another of them: the test checks it).
var printingPackages = map[string][]string{
	"cmd/rein": {"clip", "shorten", "callText", "refusalText", "(*chat).mark", "(*chat).answer", "(*tracer).mark"},
	"approve":  {"layout", "whole", "fit", "argLine", "commandLines", "stickyLegend"},
	"audit":    {"clip", "clean", "callText", "resultText", "decision", "intentDetails", "callRef", "limitsText"},
}

// sanitizers are the functions of other packages whose result is safe.
var sanitizers = map[string]bool{
	"github.com/reinhq/rein/internal/termsafe.Text":    true,
	"github.com/reinhq/rein/internal/termsafe.Line":    true,
	"github.com/reinhq/rein/internal/termsafe.Visible": true,
}

// printers are the calls that write to a terminal (or to a writer that may
// be one), by the index of their first printed argument; -1: every
// argument after the writer, with the format first.
var printers = map[string]int{
	"fmt.Fprint": 1, "fmt.Fprintf": 1, "fmt.Fprintln": 1,
	"fmt.Print": 0, "fmt.Printf": 0, "fmt.Println": 0,
	"io.WriteString": 1,
	"(*github.com/reinhq/rein/audit.shower).printf": 0,
}

// TestPrintersSanitize parses and type-checks the packages that print to
// the terminal and flags every printing call (fmt.Fprint*, fmt.Print*,
// io.WriteString, audit's printf) with an argument that could carry
// untrusted text (a string, an error, a []byte, any value that is not a
// number, a bool or a constant) and is not the result of termsafe or of a
// function listed as returning safe text. Writes to a strings.Builder or a
// bytes.Buffer build a string that is checked where it is printed.
func TestPrintersSanitize(t *testing.T) {
	goTool, err := exec.LookPath("go")
	testenv.Need(t, "go", err)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range printingPackages {
		dirs = append(dirs, "./"+d)
	}
	slices.Sort(dirs)
	cmd := exec.Command(goTool, append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, dirs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		p, e, _ := strings.Cut(sc.Text(), "\t")
		exports[p] = e
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	for _, d := range dirs {
		rel := strings.TrimPrefix(d, "./")
		problems := checkPackage(t, fset, imp, filepath.Join(root, rel), "github.com/reinhq/rein/"+rel, printingPackages[rel])
		for _, p := range problems {
			t.Errorf("%s", p)
		}
	}
}

func checkPackage(t *testing.T, fset *token.FileSet, imp types.Importer, dir, path string, safeFuncs []string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, filepath.Base(n)); err != nil || !ok {
			continue // built for another system
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" || !strings.HasSuffix(f.Name.Name, "_test") {
			files = append(files, f)
		}
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: imp, Error: func(error) {}}).Check(path, fset, files, info)
	if err != nil {
		t.Fatalf("type-check %s: %v", path, err)
	}
	safe := map[string]bool{}
	for k := range sanitizers {
		safe[k] = true
	}
	for _, f := range safeFuncs {
		// A method is listed as "(*T).m" and named by types as
		// "(*path.T).m".
		if recv, m, ok := strings.Cut(strings.TrimPrefix(f, "(*"), ")."); ok && strings.HasPrefix(f, "(*") {
			obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(lookupType(pkg, recv)), true, pkg, m)
			if obj == nil {
				t.Errorf("%s: %s is listed as returning safe text but does not exist", path, f)
			}
			safe["(*"+path+"."+recv+")."+m] = true
			continue
		}
		if pkg.Scope().Lookup(f) == nil {
			t.Errorf("%s: %s is listed as returning safe text but does not exist", path, f)
		}
		safe[path+"."+f] = true
	}
	var problems []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok {
				if f, ok := info.Defs[fd.Name].(*types.Func); ok && isPrinter(f.FullName()) {
					return false // a printer's own body: its callers are checked
				}
			}
			if fd, ok := n.(*ast.FuncDecl); ok && fd.Recv == nil && slices.Contains(safeFuncs, fd.Name.Name) && !callsSafe(fd, info, safe, path) {
				problems = append(problems, fmt.Sprintf("%s: %s is listed as returning safe text but calls no sanitizer", fset.Position(fd.Pos()), fd.Name.Name))
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := callee(call, info)
			first, isPrinter := printers[name]
			if !isPrinter {
				return true
			}
			if first == 1 && builds(info.TypeOf(call.Args[0])) {
				return true
			}
			for i, a := range call.Args[first:] {
				if i == 0 && strings.HasSuffix(name, "f") && info.Types[a].Value == nil {
					problems = append(problems, fmt.Sprintf("%s: %s with a format that is not a constant", fset.Position(a.Pos()), name))
					continue
				}
				if !safeArg(a, info, safe) {
					problems = append(problems, fmt.Sprintf("%s: %s prints %s (%s) without termsafe", fset.Position(a.Pos()), name, types.ExprString(a), info.TypeOf(a)))
				}
			}
			return true
		})
	}
	return problems
}

// lookupType is the named type name of pkg, or an empty struct when there
// is none (the method lookup then fails and the test says so).
func lookupType(pkg *types.Package, name string) types.Type {
	if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok {
		return tn.Type()
	}
	return types.NewStruct(nil, nil)
}

// callee names the function a call calls: "pkg.Func" or "pkg.(*T).Method".
func callee(call *ast.CallExpr, info *types.Info) string {
	var id *ast.Ident
	switch fn := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = fn
	case *ast.SelectorExpr:
		id = fn.Sel
	default:
		return ""
	}
	f, ok := info.Uses[id].(*types.Func)
	if !ok {
		return ""
	}
	return f.FullName()
}

// builds reports whether a writer only builds a string in memory.
func builds(t types.Type) bool {
	switch types.TypeString(t, nil) {
	case "*strings.Builder", "*bytes.Buffer":
		return true
	}
	return false
}

// safeArg reports whether printing a cannot carry untrusted text.
func safeArg(a ast.Expr, info *types.Info, safe map[string]bool) bool {
	tv := info.Types[a]
	if tv.Value != nil {
		return true // a constant
	}
	if b, ok := tv.Type.Underlying().(*types.Basic); ok && b.Info()&(types.IsNumeric|types.IsBoolean) != 0 {
		return true
	}
	call, ok := ast.Unparen(a).(*ast.CallExpr)
	if !ok {
		return false
	}
	name := callee(call, info)
	if safe[name] {
		return true
	}
	// Methods of time's types print times and durations.
	return strings.HasPrefix(name, "(time.") || strings.HasPrefix(name, "(*time.")
}

// callsSafe reports whether fd's body calls a sanitizer or a safe function.
func callsSafe(fd *ast.FuncDecl, info *types.Info, safe map[string]bool, path string) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if name := callee(c, info); safe[name] && name != path+"."+fd.Name.Name {
				found = true
			}
		}
		return !found
	})
	return found
}

func isPrinter(name string) bool {
	_, ok := printers[name]
	return ok
}
