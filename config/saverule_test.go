package config_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/shell"
	"github.com/reinhq/rein/tool"
)

// TestSaveRule: an "always" answer becomes a rule in the user's file that
// loads back and covers exactly the pattern: the exact command and not one
// with an argument more; the exact path, glob characters and all. What was
// in the file stays.
func TestSaveRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := config.RuleFile{Path: filepath.Join(dir, "rein", "config.toml")}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Path, []byte("[limits]\nmax_steps = 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveRule(t.Context(), gate.Pattern{Tool: "run_bash", Command: []string{"go", "test", "./..."}}, true); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveRule(t.Context(), gate.Pattern{Tool: "edit_file", Path: "src/[a]*.go"}, true); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveRule(t.Context(), gate.Pattern{Tool: "run_bash", Command: []string{"make", "deploy"}}, false); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.Source{Path: f.Path, Required: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxSteps != 7 || len(c.Permissions.Rules) != 3 {
		t.Fatalf("file after saving: max_steps %d, rules %+v", c.Limits.MaxSteps, c.Permissions.Rules)
	}
	if fi, err := os.Stat(f.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v: want 0600 kept", fi.Mode().Perm(), err)
	}
	g, err := permission.NewGate(permission.Default, c.Permissions.Rules, shell.Options{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		call *gate.Call
		want gate.Decision
	}{
		{bashCall("go test ./..."), gate.Allow},
		{bashCall("go test ./... -exec ./evil"), gate.Ask},
		{bashCall("go test ./... && curl x"), gate.Ask},
		{bashCall("./go test ./..."), gate.Ask},
		{bashCall("go test './...'"), gate.Allow},
		{bashCall("go test ./... > out"), gate.Ask},
		{bashCall("make deploy"), gate.Deny},
		{editCall("src/[a]*.go"), gate.Allow},
		{editCall("src/a.go"), gate.Ask},
	} {
		if v := g.Check(t.Context(), tc.call); v.Decision != tc.want {
			t.Errorf("%s: %+v, want %s", tc.call.Args, v, tc.want)
		}
	}
}

// TestSaveRuleLeavesABadFile: a file the rule cannot be appended to (its
// rules are an inline array) is left as it was, and the error says so; a
// command run in a directory of its own is not saved.
func TestSaveRuleLeavesABadFile(t *testing.T) {
	t.Parallel()
	f := config.RuleFile{Path: filepath.Join(t.TempDir(), "config.toml")}
	old := "[permissions]\nrules = [{tool = \"x\", decision = \"ask\"}]\n"
	if err := os.WriteFile(f.Path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	err := f.SaveRule(t.Context(), gate.Pattern{Tool: "run_bash", Command: []string{"ls"}}, true)
	if err == nil || !strings.Contains(err.Error(), "left as it was") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(f.Path); string(data) != old {
		t.Fatalf("the file changed:\n%s", data)
	}
	if err := f.SaveRule(t.Context(), gate.Pattern{Tool: "run_bash", Command: []string{"ls"}, Dir: "sub"}, true); err == nil {
		t.Fatal("a command with a directory was saved")
	}
}

// TestUserRulesNeverTheProject: the saver refuses a user file inside the
// work dir (a project's file).
func TestUserRulesNeverTheProject(t *testing.T) {
	work := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, ".rein"))
	if _, err := config.UserRules(work); err == nil {
		t.Fatal("a user config inside the work dir was accepted for saving rules")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if _, err := config.UserRules(work); err != nil {
		t.Fatal(err)
	}
}

func bashCall(cmd string) *gate.Call {
	return mkCall("run_bash", map[string]tool.Role{"command": tool.RoleCommand}, "command", cmd)
}

func editCall(p string) *gate.Call {
	return mkCall("edit_file", map[string]tool.Role{"path": tool.RolePath}, "path", p)
}

func mkCall(name string, roles map[string]tool.Role, arg, val string) *gate.Call {
	tl := tool.New(tool.Spec{Name: name, Effect: tool.Reversible, Roles: roles},
		func(context.Context, map[string]any) (string, error) { return "", nil })
	raw, _ := json.Marshal(map[string]string{arg: val})
	return &gate.Call{ID: "c", Name: name, Args: raw, Tool: tl}
}
