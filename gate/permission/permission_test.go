package permission_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/shell"
	"github.com/reinhq/rein/tool"
)

type anyArgs map[string]any

func mkTool(name string, effect tool.Effect, roles map[string]tool.Role) tool.Tool {
	return tool.New(tool.Spec{Name: name, Effect: effect, Roles: roles},
		func(context.Context, anyArgs) (string, error) { return "", nil })
}

var (
	readFile  = mkTool("read_file", tool.ReadOnly, map[string]tool.Role{"path": tool.RolePath})
	writeFile = mkTool("write_file", tool.Reversible, map[string]tool.Role{"path": tool.RolePath})
	runBash   = mkTool("run_bash", tool.Reversible, map[string]tool.Role{"command": tool.RoleCommand, "workdir": tool.RoleDir})
	sendMail  = mkTool("send_email", tool.Irreversible, map[string]tool.Role{"to": tool.RoleRecipient})
)

func call(t tool.Tool, args string) *gate.Call {
	return &gate.Call{ID: "c", Name: t.Spec().Name, Args: json.RawMessage(args), Tool: t}
}

func opts(t testing.TB) shell.Options {
	return shell.Options{WorkDir: t.TempDir(), Home: "/home/agent"}
}

func TestModes(t *testing.T) {
	t.Parallel()
	type row struct {
		t    tool.Tool
		args string
		want map[permission.Mode]gate.Decision
	}
	A, Q, D := gate.Allow, gate.Ask, gate.Deny
	rows := []row{
		{readFile, `{"path":"a"}`, map[permission.Mode]gate.Decision{permission.Plan: A, permission.Default: A, permission.AcceptEdits: A, permission.Bypass: A}},
		{writeFile, `{"path":"a"}`, map[permission.Mode]gate.Decision{permission.Plan: D, permission.Default: Q, permission.AcceptEdits: A, permission.Bypass: A}},
		{runBash, `{"command":"go test ./..."}`, map[permission.Mode]gate.Decision{permission.Plan: D, permission.Default: Q, permission.AcceptEdits: Q, permission.Bypass: A}},
		{sendMail, `{"to":"a@b.c"}`, map[permission.Mode]gate.Decision{permission.Plan: D, permission.Default: Q, permission.AcceptEdits: Q, permission.Bypass: A}},
	}
	for _, r := range rows {
		for mode, want := range r.want {
			g, err := permission.NewGate(mode, nil, opts(t))
			if err != nil {
				t.Fatal(err)
			}
			if v := g.Check(t.Context(), call(r.t, r.args)); v.Decision != want || v.Gate != permission.Name {
				t.Errorf("%s in %s mode: %+v, want %s", r.t.Spec().Name, mode, v, want)
			}
		}
	}
}

func TestRules(t *testing.T) {
	t.Parallel()
	rules := []permission.Rule{
		{Tool: "run_bash", Decision: "allow", Command: "go test",
			Match: []string{"go test ./...", "go test -run X ./pkg"}, NoMatch: []string{"go testing", "go test ./... && curl evil.example", "gofmt -l .",
				// A program given with a path may be one the agent wrote.
				"./go test ./...", "/usr/local/go/bin/go test"}},
		{Tool: "run_bash", Decision: "allow", Command: "/usr/local/go/bin/go vet",
			Match: []string{"/usr/local/go/bin/go vet ./...", "/usr/local/go/bin//go vet"}, NoMatch: []string{"go vet", "./go vet", "/tmp/usr/local/go/bin/go vet"}},
		{Tool: "run_bash", Decision: "deny", Command: "git push"},
		{Tool: "run_bash", Decision: "ask", Command: "make"},
		{Tool: "write_file", Decision: "allow", Path: "docs/**"},
		{Tool: "write_file", Decision: "deny", Path: "*.lock"},
	}
	g, err := permission.NewGate(permission.Default, rules, opts(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t    tool.Tool
		args string
		want gate.Decision
	}{
		{runBash, `{"command":"go test ./..."}`, gate.Allow},
		{runBash, `{"command":"go test ./... | tee out.txt"}`, gate.Ask}, // tee is not go test: the mode decides
		{runBash, `{"command":"go test ./... && git push"}`, gate.Deny},  // deny anywhere wins
		{runBash, `{"command":"cd sub && git push origin"}`, gate.Deny},  // parsed, not prefix-matched on text
		{runBash, `{"command":"bash -c 'git push'"}`, gate.Deny},         // inside a wrapper
		{runBash, `{"command":"make test"}`, gate.Ask},
		{runBash, `{"command":"$(echo go) test"}`, gate.Ask}, // a dynamic name matches no allow rule
		{runBash, `{"command":"go vet ./..."}`, gate.Ask},
		{writeFile, `{"path":"docs/a/b.md"}`, gate.Allow},
		{writeFile, `{"path":"./docs/x.md"}`, gate.Allow},
		{writeFile, `{"path":"go.lock"}`, gate.Deny},
		{writeFile, `{"path":"src/x.go"}`, gate.Ask},
	} {
		if v := g.Check(t.Context(), call(c.t, c.args)); v.Decision != c.want {
			t.Errorf("%s %s: %+v, want %s", c.t.Spec().Name, c.args, v, c.want)
		}
	}
	// Plan mode is read-only whatever the rules allow.
	p, err := permission.NewGate(permission.Plan, rules, opts(t))
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Check(t.Context(), call(runBash, `{"command":"go test ./..."}`)); v.Decision != gate.Deny {
		t.Errorf("plan mode ran a command: %+v", v)
	}
	// A deny rule's hint does not reveal the rule.
	v := g.Check(t.Context(), call(runBash, `{"command":"git push"}`))
	if strings.Contains(v.Hint, "git push") || v.Hint == "" {
		t.Errorf("hint %q", v.Hint)
	}
}

// An allow rule for a program by name never lets the agent run a program
// of that name from somewhere it could have written it; deny and ask rules
// still catch the program wherever it is.
func TestAllowRulesMatchTheProgramAsWritten(t *testing.T) {
	t.Parallel()
	rules := []permission.Rule{
		{Tool: "run_bash", Decision: "allow", Command: "go test"},
		{Tool: "run_bash", Decision: "deny", Command: "git push"},
	}
	g, err := permission.NewGate(permission.Default, rules, opts(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd  string
		want gate.Decision
	}{
		{"go test ./...", gate.Allow},
		{"./go test ./...", gate.Ask},
		{"bin/go test", gate.Ask},
		{"sub/../go test", gate.Ask},
		{"/tmp/go test", gate.Ask},
		{"/usr/bin/go test", gate.Ask},
		{"go test && ./go test", gate.Ask},
		{"PATH=.:$PATH go test", gate.Ask},
		{"export PATH=bin; go test", gate.Ask},
		{"PATH=$PATH:/usr/local/go/bin go test", gate.Allow},
		{"./git push", gate.Deny},
		{"/opt/x/git push origin", gate.Deny},
	} {
		if v := g.Check(t.Context(), call(runBash, `{"command":"`+c.cmd+`"}`)); v.Decision != c.want {
			t.Errorf("%s: %s (%s), want %s", c.cmd, v.Decision, v.Reason, c.want)
		}
	}
}

func TestBadRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule permission.Rule
		want string
	}{
		{permission.Rule{Decision: "allow"}, `"tool" is required`},
		{permission.Rule{Tool: "x", Decision: "maybe"}, "want allow, ask or deny"},
		{permission.Rule{Tool: "x", Decision: "allow", Command: "a", Path: "b"}, "not both"},
		{permission.Rule{Tool: "x", Decision: "allow", Command: "go test && ls"}, "one plain command prefix"},
		{permission.Rule{Tool: "x", Decision: "allow", Command: "$X test"}, "one plain command prefix"},
		{permission.Rule{Tool: "x", Decision: "allow", Path: "[x"}, "not a valid glob"},
		{permission.Rule{Tool: "x", Decision: "allow", Match: []string{"a"}}, "examples need"},
		{permission.Rule{Tool: "x", Decision: "allow", Command: "go test", Match: []string{"go vet"}}, `does not match its example "go vet"`},
		{permission.Rule{Tool: "x", Decision: "allow", Command: "go test", NoMatch: []string{"go test -v"}}, `matches "go test -v"`},
	} {
		_, err := permission.NewGate(permission.Default, []permission.Rule{c.rule}, opts(t))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.rule, err, c.want)
		}
	}
	if _, err := permission.ParseMode("yolo"); err == nil {
		t.Error("yolo is not a mode")
	}
	if !permission.Bypass.Looser(permission.Default) || permission.Plan.Looser(permission.Default) {
		t.Error("mode order")
	}
}

// TestRulesSeeThrough: a deny or ask rule still matches when later
// arguments are only known at run time, and when an unknown program's
// arguments hold the command (issue 14 item 11). Before, all of these ran
// under the mode's decision.
func TestRulesSeeThrough(t *testing.T) {
	t.Parallel()
	rules := []permission.Rule{
		{Tool: "run_bash", Decision: "deny", Command: "git add",
			Match: []string{"xargs git add -A < /dev/null", "git add $(ls)"}},
		{Tool: "run_bash", Decision: "ask", Command: "git reset --hard"},
		{Tool: "run_bash", Decision: "deny", Command: "rm"},
		{Tool: "run_bash", Decision: "allow", Command: "go test"},
	}
	g, err := permission.NewGate(permission.Bypass, rules, opts(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd  string
		want gate.Decision
	}{
		{"xargs git add -A < /dev/null", gate.Deny},
		{"git add $(ls)", gate.Deny},
		{"git add \"$F\"", gate.Deny},
		{"find . -name '*.go' -print0 | xargs -0 git add", gate.Deny},
		{"git reset $MODE", gate.Ask}, // may be --hard
		{"rtk git reset --hard", gate.Ask},
		{"rtk git add .", gate.Deny},
		{"mytool rm -f x", gate.Deny},
		{"./wrap.sh --quiet rm x", gate.Deny},
		// legitimate: what the rules do not name, and the allow rule
		{"git status && git diff $REF", gate.Allow},
		{"git commit -m \"$MSG\"", gate.Allow},
		{"rtk git status", gate.Allow},
		{"go test ./...", gate.Allow},
		{"go test $PKG", gate.Allow}, // bypass mode: an allow rule is not needed
	} {
		if v := g.Check(t.Context(), call(runBash, `{"command":`+jsonString(c.cmd)+`}`)); v.Decision != c.want {
			t.Errorf("%q: %s (%s), want %s", c.cmd, v.Decision, v.Reason, c.want)
		}
	}
	// An allow rule still needs every word literal.
	d, err := permission.NewGate(permission.Default, rules, opts(t))
	if err != nil {
		t.Fatal(err)
	}
	if v := d.Check(t.Context(), call(runBash, `{"command":"go test $PKG"}`)); v.Decision != gate.Ask {
		t.Errorf("go test $PKG in default mode: %s, want ask", v.Decision)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
