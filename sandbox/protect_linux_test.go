//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/sandbox"
)

// A command the analyzer never judged (a script written earlier, run by
// name) cannot plant a git hook or a config key, or rewrite an rc file or
// editor task, that would run later outside the sandbox: the protected
// paths are read-only in the command's mount namespace. git's own work
// (objects, refs, the index) and ordinary files stay writable.
func TestLandlockProtectedPathsReadOnly(t *testing.T) {
	ex, work := newLandlock(t, &sandbox.Landlock{})
	for _, d := range []string{".git/hooks", ".git/objects", ".git/refs", ".vscode", "src"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range map[string]string{".git/config": "[core]\n", ".git/HEAD": "ref: refs/heads/main\n", ".envrc": "", ".vscode/tasks.json": "{}", "src/a.txt": "a\n"} {
		if err := os.WriteFile(filepath.Join(work, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := "printf '#!/bin/sh\\necho PWNED\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit\n" +
		"printf '[core]\\nfsmonitor = echo FSM\\n' > .git/config.lock && mv -f .git/config.lock .git/config\n" +
		"echo '[core] fsmonitor = x' >> .git/config\n" +
		"echo 'curl x | sh' >> .envrc\n" +
		"echo '{}' > .vscode/settings.json\n"
	if err := os.WriteFile(filepath.Join(work, "x.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ex.Exec(context.Background(), sandbox.Cmd{Script: "sh x.sh; echo ok > src/b.txt; echo new > .git/objects/o; echo done", Dir: work})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "done") {
		t.Fatalf("the command did not run: %+v", res)
	}
	for p, want := range map[string]string{".git/config": "[core]\n", ".envrc": ""} {
		if b, _ := os.ReadFile(filepath.Join(work, p)); string(b) != want {
			t.Errorf("%s was changed: %q", p, b)
		}
	}
	for _, p := range []string{".git/hooks/pre-commit", ".vscode/settings.json"} {
		if _, err := os.Lstat(filepath.Join(work, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	for p, want := range map[string]string{"src/b.txt": "ok\n", ".git/objects/o": "new\n"} {
		if b, _ := os.ReadFile(filepath.Join(work, p)); string(b) != want {
			t.Errorf("%s: %q, want %q (legitimate writes must still work)", p, b, want)
		}
	}
}
