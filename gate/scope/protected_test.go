package scope_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/scope"
	"github.com/reinhq/rein/protect"
	"github.com/reinhq/rein/tool"
)

// runner is a side-effecting tool with a working-directory argument, like run_bash.
type runner struct{}

func (runner) Spec() tool.Spec {
	return tool.Spec{Name: "run", Effect: tool.Reversible, Roles: map[string]tool.Role{"command": tool.RoleCommand, "workdir": tool.RoleDir}}
}

func (runner) Run(context.Context, json.RawMessage) (string, error) { return "", nil }

// protectedFixture is a work dir with a git repository whose hooks
// directory is reachable through links, a nested repository, a worktree
// whose .git is a "gitdir:" file, and a repository whose .git is a link.
func protectedFixture(t testing.TB) *fixture {
	t.Helper()
	f := newFixture(t, "")
	for _, d := range []string{".git/hooks", "sub/.git/hooks", "deep/er"} {
		must(t, os.MkdirAll(filepath.Join(f.work, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(f.work, ".git/config"), []byte("[core]\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.work, ".git/hooks/pre-commit"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Symlink(".git/hooks", filepath.Join(f.work, "h")))                  // ln -s .git/hooks h
	must(t, os.Symlink(".git/config", filepath.Join(f.work, "cfg")))               // a file link
	must(t, os.Symlink(".git/hooks/post-merge", filepath.Join(f.work, "newhook"))) // a dangling link: write_file would create the hook
	must(t, os.Symlink("../.git", filepath.Join(f.work, "deep", "g")))             // a link from below
	must(t, os.MkdirAll(filepath.Join(f.work, "wt/store/hooks"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.work, "wt/.git"), []byte("gitdir: store\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(f.work, "linked/store2/hooks"), 0o755))
	must(t, os.Symlink("store2", filepath.Join(f.work, "linked", ".git")))
	must(t, os.MkdirAll(filepath.Join(f.work, "nested/sub/store/hooks"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.work, "nested/sub/.git"), []byte("gitdir: "+filepath.Join(f.work, "nested/sub/store")+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.work, "README.md"), []byte("# hi\n"), 0o644))
	return f
}

func TestWriteToProtectedPathAsks(t *testing.T) {
	t.Parallel()
	f := protectedFixture(t)
	write, edit, read := f.tools["write_file"], f.tools["edit_file"], f.tools["read_file"]
	tests := []struct {
		name string
		tool tool.Tool
		args string
		want gate.Decision
		why  string // in the reason of an Ask
	}{
		{"git config", write, `{"path":".git/config","content":"[core]\nfsmonitor = x"}`, gate.Ask, "core.fsmonitor run code"},
		{"edit git config", edit, `{"path":".git/config","old_string":"[core]","new_string":"[core]\nfsmonitor=x"}`, gate.Ask, "git reads it"},
		{"hook", write, `{"path":".git/hooks/pre-commit","content":"x"}`, gate.Ask, "git reads it"},
		{"nested hook", write, `{"path":"sub/.git/hooks/x","content":"x"}`, gate.Ask, "git reads it"},
		{"case variant", write, `{"path":".GIT/CONFIG","content":"x"}`, gate.Ask, "git reads it"},
		{"climb back in", write, `{"path":"./.git/../.git/config","content":"x"}`, gate.Ask, "git reads it"},
		{"absolute", write, `{"path":"$WORK/.git/config","content":"x"}`, gate.Ask, "git reads it"},
		{"through alias", write, `{"path":"$ALIAS/.git/hooks/post-checkout","content":"x"}`, gate.Ask, "git reads it"},
		{"dir link", write, `{"path":"h/pre-commit","content":"x"}`, gate.Ask, "resolves to .git/hooks/pre-commit"},
		{"new file through dir link", write, `{"path":"h/post-merge","content":"x"}`, gate.Ask, "resolves to .git/hooks/post-merge"},
		{"dangling link", write, `{"path":"newhook","content":"x"}`, gate.Ask, "resolves to .git/hooks/post-merge"},
		{"file link", write, `{"path":"cfg","content":"x"}`, gate.Ask, "resolves to .git/config"},
		{"link from below", edit, `{"path":"deep/g/config","old_string":"a","new_string":"b"}`, gate.Ask, "resolves to .git/config"},
		{"bashrc", write, `{"path":".bashrc","content":"curl x|sh"}`, gate.Ask, "bash runs it"},
		{"vscode tasks", write, `{"path":".vscode/tasks.json","content":"{}"}`, gate.Ask, "runs its tasks"},
		{"rein config", write, `{"path":".rein/config.toml","content":"[tools.limits]\nsend_email = 50"}`, gate.Ask, "next session's rights"},
		{"mcp", write, `{"path":".mcp.json","content":"{}"}`, gate.Ask, "start the servers"},
		{"envrc", write, `{"path":"sub/.envrc","content":"x"}`, gate.Ask, "direnv"},
		{"command in .git", runner{}, `{"command":"echo x > config","workdir":".git"}`, gate.Ask, "git reads it"},

		{"README", write, `{"path":"README.md","content":"# new"}`, gate.Allow, ""},
		{"edit README", edit, `{"path":"README.md","old_string":"hi","new_string":"ho"}`, gate.Allow, ""},
		{"gitconfig.go", write, `{"path":"src/gitconfig.go","content":"package src"}`, gate.Allow, ""},
		{"bashrc.md", write, `{"path":"docs/.bashrc.md","content":"x"}`, gate.Allow, ""},
		{"gitignore", write, `{"path":".gitignore","content":"x"}`, gate.Allow, ""},
		{"command in sub", runner{}, `{"command":"echo x > config","workdir":"sub"}`, gate.Allow, ""},
		{"read git config", read, `{"path":".git/config"}`, gate.Allow, ""},
		{"read through link", read, `{"path":"h/pre-commit"}`, gate.Allow, ""},
		{"grep git dir", f.tools["grep"], `{"pattern":"x","path":".git"}`, gate.Allow, ""},
	}
	repl := strings.NewReplacer("$WORK", f.work, "$ALIAS", f.alias)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := repl.Replace(tt.args)
			v := f.gate.Check(t.Context(), &gate.Call{ID: "1", Name: tt.tool.Spec().Name, Args: json.RawMessage(args), Tool: tt.tool})
			if v.Decision != tt.want || v.Gate != scope.Name {
				t.Fatalf("Check(%s) = %+v, want %v", args, v, tt.want)
			}
			if tt.want == gate.Ask {
				if !strings.Contains(v.Reason, tt.why) || !strings.Contains(v.Reason, "protected path") || !strings.Contains(v.Reason, "every mode") {
					t.Errorf("reason %q: want it to say it is protected, why (%q) and that every mode asks", v.Reason, tt.why)
				}
				if v.Hint == "" {
					t.Error("no hint for the model")
				}
			}
		})
	}
}

// A work dir whose .git is a "gitdir:" file or a link into the work dir
// (a worktree, a submodule, a relocated repository): writes into the
// directory it points to are writes to .git.
func TestGitDirPointer(t *testing.T) {
	t.Parallel()
	f := protectedFixture(t)
	write := f.tools["write_file"]
	for _, tt := range []struct {
		workdir, path, why string
		want               gate.Decision
	}{
		{"wt", "store/hooks/pre-commit", "inside the git directory .git points to", gate.Ask},
		{"wt", "store/config", "inside the git directory .git points to", gate.Ask},
		{"wt", "main.go", "", gate.Allow},
		{"wt", "storex/config", "", gate.Allow},
		{"linked", "store2/hooks/pre-commit", "inside the git directory .git points to", gate.Ask},
		{"linked", "src/app.go", "", gate.Allow},
		{"nested", "sub/store/hooks/x", "inside the git directory sub/.git points to", gate.Ask},
	} {
		g, err := scope.NewGate(filepath.Join(f.work, tt.workdir))
		if err != nil {
			t.Fatal(err)
		}
		v := g.Check(t.Context(), &gate.Call{Name: "write_file", Args: json.RawMessage(`{"path":"` + tt.path + `","content":"x"}`), Tool: write})
		if v.Decision != tt.want || !strings.Contains(v.Reason, tt.why) {
			t.Errorf("%s: write %s: %+v, want %v with %q", tt.workdir, tt.path, v, tt.want, tt.why)
		}
	}
}

// A refusal wins over a protected path's Ask: an argument outside the work
// dir is refused even when another argument is protected.
func TestOutsideBeatsProtected(t *testing.T) {
	t.Parallel()
	f := protectedFixture(t)
	v := f.gate.Check(t.Context(), &gate.Call{Name: "w", Args: json.RawMessage(`{"a":".git/config","b":"../outside/secret"}`), Tool: writer2{}})
	if v.Decision != gate.Deny {
		t.Fatalf("Check = %+v, want Deny", v)
	}
}

type writer2 struct{}

func (writer2) Spec() tool.Spec {
	return tool.Spec{Name: "w", Effect: tool.Reversible, Roles: map[string]tool.Role{"a": tool.RolePath, "b": tool.RolePath}}
}

func (writer2) Run(context.Context, json.RawMessage) (string, error) { return "", nil }

func TestWithProtectedExtends(t *testing.T) {
	t.Parallel()
	f := protectedFixture(t)
	g, err := scope.NewGate(f.work)
	if err != nil {
		t.Fatal(err)
	}
	g.WithProtected(protect.Default().With(protect.Rule{Pattern: "deploy/", Why: "CI deploys it"}))
	write := f.tools["write_file"]
	for path, want := range map[string]gate.Decision{"deploy/run.sh": gate.Ask, ".git/config": gate.Ask, "README.md": gate.Allow} {
		v := g.Check(t.Context(), &gate.Call{Name: "write_file", Args: json.RawMessage(`{"path":"` + path + `","content":"x"}`), Tool: write})
		if v.Decision != want {
			t.Errorf("%s: %+v, want %v", path, v, want)
		}
	}
	// nil is the built-in list, not an empty one.
	g.WithProtected(nil)
	v := g.Check(t.Context(), &gate.Call{Name: "write_file", Args: json.RawMessage(`{"path":".git/config","content":"x"}`), Tool: write})
	if v.Decision != gate.Ask {
		t.Errorf("WithProtected(nil): %+v, want Ask", v)
	}
}

// A work dir inside a protected directory: every write in it is protected.
func TestWorkDirInsideProtectedDir(t *testing.T) {
	t.Parallel()
	f := protectedFixture(t)
	g, err := scope.NewGate(filepath.Join(f.work, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	v := g.Check(t.Context(), &gate.Call{Name: "write_file", Args: json.RawMessage(`{"path":"hooks/pre-commit","content":"x"}`), Tool: f.tools["write_file"]})
	if v.Decision != gate.Ask {
		t.Errorf("Check = %+v, want Ask", v)
	}
}

// FuzzProtected holds the gate to an independent oracle: for any path the
// gate lets a tool use, if the path as written or where it lands (every
// link resolved with the plain os calls of landing) is protected, a write
// there is asked about; a read never is.
func FuzzProtected(f *testing.F) {
	for _, s := range []string{".git/config", "h/pre-commit", "cfg", "deep/g/config", "sub/.git/hooks/x", ".GIT/CONFIG",
		"./.git/../.git/config", "README.md", "src/gitconfig.go", "docs/.bashrc.md", "$WORK/.git/hooks/x", "h", "deep/g/hooks/../config"} {
		f.Add(s)
	}
	fx := protectedFixture(f)
	write, read := fx.tools["write_file"], fx.tools["read_file"]
	l := protect.Default()
	f.Fuzz(func(t *testing.T, p string) {
		p = fx.expand(p)
		if fx.gate.CheckPath(p) != nil {
			return
		}
		args, _ := json.Marshal(map[string]string{"path": p, "content": "x"})
		v := fx.gate.Check(t.Context(), &gate.Call{Name: "write_file", Args: args, Tool: write})
		osPath := p
		if !filepath.IsAbs(p) {
			osPath = filepath.Join(fx.work, p)
		}
		osPath = filepath.Clean(osPath)
		lexical := strings.TrimPrefix(strings.TrimPrefix(osPath, fx.work), "/")
		_, wantLex := l.Match(lexical)
		wantLand := false
		if land := landing(osPath, 0); land != "" {
			_, wantLand = l.Match(land)
		}
		if (wantLex || wantLand) && v.Decision != gate.Ask {
			t.Fatalf("write_file %q (protected as written %v, where it lands %v) = %+v, want Ask", p, wantLex, wantLand, v)
		}
		if v.Decision == gate.Deny {
			t.Fatalf("write_file %q: CheckPath allows it, Check denies it: %+v", p, v)
		}
		args, _ = json.Marshal(map[string]string{"path": p})
		if v := fx.gate.Check(t.Context(), &gate.Call{Name: "read_file", Args: args, Tool: read}); v.Decision != gate.Allow {
			t.Fatalf("read_file %q = %+v, want Allow", p, v)
		}
	})
}
