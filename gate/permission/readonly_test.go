package permission_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/shell"
)

// TestReadOnlyAutoRun: in default and accept-edits mode a command line the
// analyzer proves read-only runs without asking when a sandbox runs it,
// and asks as before with no sandbox; a user's ask or deny rule still
// wins; what is not proven asks; plan mode is unchanged.
func TestReadOnlyAutoRun(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	landlock := shell.Options{WorkDir: work, Exec: shell.Executor{Sandboxed: true}, ExecTool: "run_bash"}
	docker := shell.Options{WorkDir: work, Exec: shell.Executor{Sandboxed: true, TmpDir: "/tmp"}, ExecTool: "run_bash"}
	none := shell.Options{WorkDir: work, ExecTool: "run_bash"}
	askLog := []permission.Rule{{Tool: "run_bash", Decision: "ask", Command: "git log"}}
	A, Q, D := gate.Allow, gate.Ask, gate.Deny
	for _, c := range []struct {
		name  string
		mode  permission.Mode
		o     shell.Options
		rules []permission.Rule
		cmd   string
		want  gate.Decision
	}{
		{"landlock git status", permission.Default, landlock, nil, "git status", A},
		{"docker pipeline", permission.Default, docker, nil, "grep -rn TODO . | head", A},
		{"accept-edits", permission.AcceptEdits, landlock, nil, "ls -la", A},
		{"no sandbox", permission.Default, none, nil, "git status", Q},
		{"not read-only", permission.Default, landlock, nil, "go test ./...", Q},
		{"write redirect", permission.Default, landlock, nil, "ls > out.txt", Q},
		{"ask rule wins", permission.Default, landlock, askLog, "git log", Q},
		{"plan refuses the shell", permission.Plan, landlock, nil, "ls", D},
	} {
		g, err := permission.NewGate(c.mode, c.rules, c.o)
		if err != nil {
			t.Fatal(err)
		}
		v := g.Check(t.Context(), call(runBash, `{"command":`+quote(c.cmd)+`}`))
		if v.Decision != c.want {
			t.Errorf("%s: %q: %+v, want %s", c.name, c.cmd, v, c.want)
		}
		if v.Decision == A && v.Reason != permission.ReasonReadOnly && c.mode == permission.Default {
			t.Errorf("%s: reason %q, want %q", c.name, v.Reason, permission.ReasonReadOnly)
		}
	}
}

func quote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '"' || r == '\\' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}
