package scope_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/scope"
	"github.com/reinhq/rein/tool"
)

func TestCheckPathInside(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "link-inside")
	must(t, os.Symlink("../inside.txt", filepath.Join(f.work, "sub", "up-in")))
	for _, p := range []string{
		"", ".", "./", "inside.txt", "./inside.txt", "sub/inner.txt", "sub/../inside.txt",
		"sub/", "sub/new/deeper/file.txt", "not-yet.txt", "in/inner.txt", "inner-link.txt",
		"abs-in/inner.txt", // an absolute link that stays inside: the gate allows it (os.Root will not follow it)
		"sub/up-in",        // a link that climbs, but stays inside
		f.work, f.work + "/", f.work + "/sub/inner.txt", f.alias + "/sub/inner.txt", f.work + "/new.txt",
		f.work + "//sub/../inside.txt",
		".env", ".ssh/id_rsa", "secrets/aws/credentials", // credential-looking names inside are the user's project
		"%2e%2e/x", "\u2025/x", "...", "a..b", "..foo", "foo..",
		"dir with spaces/ünïcode.txt",
		strings.Repeat("a/", 2000) + "x",
		strings.Repeat("a/", 1000) + strings.Repeat("../", 1000) + "inside.txt",
	} {
		if err := f.gate.CheckPath(p); err != nil {
			t.Errorf("CheckPath(%.80q) = %v, want allowed", p, err)
		}
	}
	for _, p := range []string{"*.go", "**/*.go", "sub/**", "./sub/*.txt", "in/*", "{a,b}/*", `sub\*`} {
		if err := f.gate.CheckGlob(p); err != nil {
			t.Errorf("CheckGlob(%q) = %v, want allowed", p, err)
		}
	}
}

func TestCheckPathOutside(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "link-dir-out")
	must(t, os.Symlink("../../outside", filepath.Join(f.work, "sub", "esc")))
	must(t, os.Symlink("../work/inside.txt", filepath.Join(f.work, "sub", "there-and-back"))) // sub/../work/inside.txt: work/work/… does not exist
	must(t, os.Symlink(f.base, filepath.Join(f.work, "base")))
	must(t, os.Symlink("loop2", filepath.Join(f.work, "loop1")))
	must(t, os.Symlink("loop1", filepath.Join(f.work, "loop2")))
	tests := []struct {
		path string
		want error
	}{
		{"..", scope.ErrOutside},
		{"../outside/secret", scope.ErrOutside},
		{"sub/../../outside", scope.ErrOutside},
		{"/", scope.ErrOutside},
		{"/etc/passwd", scope.ErrOutside},
		{f.outside, scope.ErrOutside},
		{f.base, scope.ErrOutside},
		{f.work + "x/y", scope.ErrOutside}, // a sibling whose name starts with the work dir's
		{f.work + "/../outside", scope.ErrOutside},
		{"~", scope.ErrOutside},
		{"~/x", scope.ErrOutside},
		{`..\x`, scope.ErrOutside},
		{`sub\..\..\x`, scope.ErrOutside},
		{"out", scope.ErrOutside},
		{"out/secret", scope.ErrOutside},
		{"out/nope/deeper", scope.ErrOutside},
		{"sub/esc/secret", scope.ErrOutside},
		{"base/outside", scope.ErrOutside},
		{"base", scope.ErrOutside}, // the directory the work dir is in
		{"base/work/inside.txt", nil},
		{"sub/there-and-back", nil},
		{"x\x00y", scope.ErrUnchecked},
		{"loop1", scope.ErrUnchecked},
	}
	for _, tt := range tests {
		err := f.gate.CheckPath(tt.path)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("CheckPath(%q) = %v, want %v", tt.path, err, tt.want)
		}
	}
	for _, p := range []string{"/etc/*", "../*", "**/../x", `**\..\x`, "~/*", "out/*", "out/**/*.go", "out", "sub/esc/*", `\etc\*`, "x\x00*"} {
		if err := f.gate.CheckGlob(p); err == nil {
			t.Errorf("CheckGlob(%q) = nil, want refused", p)
		}
	}
}

// shellTool is a tool with the given argument roles that does nothing.
type shellTool struct{ roles map[string]tool.Role }

func (s shellTool) Spec() tool.Spec { return tool.Spec{Name: "shell", Roles: s.roles} }

func (shellTool) Run(context.Context, json.RawMessage) (string, error) { return "", nil }

func TestCheckVerdicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "link-dir-out")
	must(t, os.Symlink("loop", filepath.Join(f.work, "loop")))
	shell := shellTool{roles: map[string]tool.Role{"command": tool.RoleCommand, "cwd": tool.RoleDir, "files": tool.RoleGlob, "out": tool.RolePath}}
	tests := []struct {
		name string
		tool tool.Tool
		args string
		want gate.Decision
		hint string
	}{
		{"read inside", f.tools["read_file"], `{"path":"sub/inner.txt"}`, gate.Allow, ""},
		{"read outside", f.tools["read_file"], `{"path":"../outside/secret"}`, gate.Deny,
			`The path "../outside/secret" is outside the working directory, which is all this session may touch. Use a path relative to the working directory.`},
		{"glob pattern out", f.tools["glob"], `{"pattern":"out/*"}`, gate.Deny,
			`The pattern "out/*" is outside the working directory, which is all this session may touch. Use a pattern relative to the working directory.`},
		{"glob path out", f.tools["glob"], `{"pattern":"*","path":"out"}`, gate.Deny, `The path "out" is outside`},
		{"glob no path", f.tools["glob"], `{"pattern":"**/*.txt"}`, gate.Allow, ""},
		{"grep include", f.tools["grep"], `{"pattern":"x","include":"../*"}`, gate.Deny, `The pattern "../*" is outside`},
		{"NUL", f.tools["read_file"], `{"path":"a\u0000b"}`, gate.Deny, `could not be checked`},
		{"path not a string", f.tools["read_file"], `{"path":42}`, gate.Deny, `must be a string`},
		{"path null", f.tools["glob"], `{"pattern":"*","path":null}`, gate.Allow, ""},
		{"not an object", f.tools["glob"], `[1]`, gate.Allow, ""}, // nothing to judge; validation refuses it
		{"dir role", shell, `{"command":"ls /etc","cwd":"../outside"}`, gate.Deny, `The path "../outside" is outside`},
		{"dir role inside", shell, `{"command":"cat /etc/passwd","cwd":"sub"}`, gate.Allow, ""}, // commands are not this gate's
		{"every role judged", shell, `{"cwd":"sub","files":"*.go","out":"/tmp/x"}`, gate.Deny, `The path "/tmp/x" is outside`},
		{"unknown tool", nil, `{"path":"/etc/passwd"}`, gate.Deny, "There is no tool"},
		{"long path cut in the hint", f.tools["read_file"], `{"path":"../` + strings.Repeat("x", 300) + `"}`, gate.Deny, `xxx…" is outside`},
		{"glob loop", f.tools["glob"], `{"pattern":"loop/*"}`, gate.Deny, `could not be checked`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := f.gate.Check(t.Context(), &gate.Call{ID: "1", Name: "x", Args: json.RawMessage(tt.args), Tool: tt.tool})
			if v.Decision != tt.want || v.Gate != scope.Name {
				t.Fatalf("Check(%s) = %+v, want %v from %s", tt.args, v, tt.want, scope.Name)
			}
			if !strings.Contains(v.ForModel(), tt.hint) {
				t.Errorf("Check(%s) tells the model %q, want it to contain %q", tt.args, v.ForModel(), tt.hint)
			}
			if v.Decision == gate.Deny && (v.Reason == "" || v.Hint == "") {
				t.Errorf("Check(%s) = %+v: a refusal needs a reason and a hint", tt.args, v)
			}
		})
	}
}

func TestNewGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	must(t, os.WriteFile(file, nil, 0o644))
	for _, wd := range []string{filepath.Join(dir, "missing"), file} {
		if g, err := scope.NewGate(wd); err == nil {
			t.Errorf("NewGate(%s) = %v, want an error", wd, g)
		}
	}
	g, err := scope.NewGate(dir)
	if err != nil || g.Name() != "scope" {
		t.Fatalf("NewGate(%s) = %v, %v", dir, g, err)
	}
	// A relative work dir is taken from the current directory.
	if _, err := scope.NewGate("."); err != nil {
		t.Errorf("NewGate(.) = %v", err)
	}
}
