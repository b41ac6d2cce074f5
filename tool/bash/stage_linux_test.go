//go:build linux

package bash_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool/bash"
)

// TestMain lets the test binary serve as the landlock sandbox's helper.
func TestMain(m *testing.M) {
	if sandbox.IsHelper() {
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestStaging judges a staged command's writes: protected paths refused
// whatever the command, changes above the threshold, mass deletes and
// deletions under .git/ asked about (and refused where nobody can
// answer), everything else saved and applied.
func TestStaging(t *testing.T) {
	if err := sandbox.StageStatus(); err != nil {
		testenv.Need(t, "overlay", err)
	}
	for _, c := range []struct {
		name     string
		files    []string // made before, each with content "old"
		command  string
		staging  bash.Staging
		answer   bool
		asked    bool
		want     string   // in the output
		present  []string // after
		absent   []string
		unchaged []string // still "old"
		saved    []string // given to Snapshot
	}{
		{name: "small change applied and saved", files: []string{"a", "b"},
			command: "echo new > a; rm b; echo c > c", want: "applied the command's writes: 1 file created, 1 changed, 1 deleted",
			present: []string{"a", "c"}, absent: []string{"b"}, saved: []string{"a", "b", "c"}},
		{name: "protected path refused and the rest applied", files: []string{"README"},
			command: "sh -c \"$(printf 'echo x > .envrc; echo y > README')\"", want: "refused, as protected paths: .envrc",
			absent: []string{".envrc"}, present: []string{"README"}, saved: []string{"README"}},
		{name: "above the threshold asks; no", files: []string{"a", "b", "c"}, staging: bash.Staging{AskAbove: 2},
			command: "for f in a b c; do echo n > $f; done", asked: true, want: "NOT applied (3 files changed; it changes or deletes more than 2 files): the user said no",
			unchaged: []string{"a", "b", "c"}},
		{name: "above the threshold asks; yes", files: []string{"a", "b", "c"}, staging: bash.Staging{AskAbove: 2}, answer: true,
			command: "rm a b c", asked: true, want: "applied the command's writes: 3 files deleted",
			absent: []string{"a", "b", "c"}, saved: []string{"a", "b", "c"}},
		{name: "unattended: refused without asking", files: []string{"a", "b", "c"}, staging: bash.Staging{AskAbove: 2, NeverAsk: true},
			command: "rm a b c", want: "needs a yes this run cannot give", unchaged: []string{"a", "b", "c"}},
		{name: "deleting under .git asks whatever the threshold", files: []string{".git/HEAD", ".git/objects/x"}, staging: bash.Staging{AskAbove: -1},
			command: "rm -rf .git/objects", asked: true, want: "it deletes files under .git/", unchaged: []string{".git/objects/x"}},
		{name: "a fresh repository is applied", command: "git init -q r && echo ok",
			want: "including .git/", present: []string{"r/.git/HEAD", "r/.git/config"}},
		{name: "created files do not count toward the threshold", staging: bash.Staging{AskAbove: 1},
			command: "mkdir out && for i in 1 2 3 4 5; do echo $i > out/$i; done", want: "5 files created", present: []string{"out/5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			for _, f := range c.files {
				p := filepath.Join(work, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l := &sandbox.Landlock{WorkDir: work, Stage: true}
			t.Cleanup(func() { l.Close() })
			var saved []string
			asked := false
			st := c.staging
			st.Snapshot = func(rel string) error { saved = append(saved, filepath.ToSlash(rel)); return nil }
			st.Ask = func(context.Context, string) (bool, error) { asked = true; return c.answer, nil }
			tl := bash.RunBash(l, work, bash.Options{Staging: &st, Quarantine: t.TempDir()})
			args, _ := json.Marshal(map[string]string{"command": c.command})
			out, err := tl.Run(t.Context(), args)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if err := l.StageErr(); err != nil {
				testenv.Need(t, "overlay", err)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output %q\nwant it to contain %q", out, c.want)
			}
			if asked != c.asked {
				t.Errorf("asked: %v, want %v", asked, c.asked)
			}
			for _, p := range c.present {
				if _, err := os.Lstat(filepath.Join(work, p)); err != nil {
					t.Errorf("%s: %v, want it there", p, err)
				}
			}
			for _, p := range c.absent {
				if _, err := os.Lstat(filepath.Join(work, p)); err == nil {
					t.Errorf("%s is there, want it gone", p)
				}
			}
			for _, p := range c.unchaged {
				if b, err := os.ReadFile(filepath.Join(work, p)); err != nil || string(b) != "old" {
					t.Errorf("%s: %q, %v; want it unchanged", p, b, err)
				}
			}
			slices.Sort(saved)
			if c.saved != nil && !slices.Equal(saved, c.saved) {
				t.Errorf("saved %q, want %q", saved, c.saved)
			}
		})
	}
}

// TestStagedLaterCommands: while the sandbox says it stages, the tool does
// not walk the work dir around a command (its watch of protected paths),
// from the session's first command on; what stands in its way is the
// settle. So the writes the watch used to put back are tried as the first
// command of a tool and as a later one, and must be refused there, while
// git's own work still applies.
func TestStagedLaterCommands(t *testing.T) {
	if err := sandbox.StageStatus(); err != nil {
		testenv.Need(t, "overlay", err)
	}
	for _, c := range []struct {
		name, command, want string
		absent, present     []string
		dirs                []string // still directories after
	}{
		{name: "attack: .git swapped for a link", command: "rm -rf repo/.git && ln -s /tmp repo/.git",
			want: "refused, as protected paths", dirs: []string{"repo/.git"}},
		{name: "attack: a .git file pointing elsewhere", command: "mkdir sub && printf 'gitdir: /tmp/evil\\n' > sub/.git",
			want: "refused, as protected paths: sub/.git", absent: []string{"sub/.git"}},
		{name: "attack: a .git link in a new directory", command: "mkdir sub2 && ln -s /tmp sub2/.git",
			want: "refused, as protected paths: sub2/.git", absent: []string{"sub2/.git"}},
		{name: "attack: a hook created", command: "echo 'curl x' > repo/.git/hooks/pre-commit",
			want: "refused, as protected paths: repo/.git/hooks/pre-commit", absent: []string{"repo/.git/hooks/pre-commit"}},
		{name: "attack: an rc file", command: "echo x > .envrc", want: "refused, as protected paths: .envrc", absent: []string{".envrc"}},
		{name: "legit: a commit", command: "cd repo && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && echo ok",
			want: "applied", dirs: []string{"repo/.git"}},
		{name: "legit: a new repository", command: "git init -q fresh && echo ok", want: "including .git/", present: []string{"fresh/.git/HEAD"}},
	} {
		for _, first := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/first=%v", c.name, first), func(t *testing.T) {
				t.Parallel()
				work := t.TempDir()
				if err := os.MkdirAll(filepath.Join(work, "repo/.git/hooks"), 0o755); err != nil {
					t.Fatal(err)
				}
				git := exec.Command("git", "init", "-q", "repo")
				git.Dir = work
				if out, err := git.CombinedOutput(); err != nil {
					t.Fatalf("git init: %v %s", err, out)
				}
				l := &sandbox.Landlock{WorkDir: work, Stage: true}
				t.Cleanup(func() { l.Close() })
				st := bash.Staging{AskAbove: -1, NeverAsk: true}
				tl := bash.RunBash(l, work, bash.Options{Staging: &st, Quarantine: t.TempDir()})
				if !first {
					if _, err := tl.Run(t.Context(), []byte(`{"command":"true"}`)); err != nil {
						t.Fatal(err)
					}
					if err := l.StageErr(); err != nil {
						testenv.Need(t, "overlay", err)
					}
				}
				args, _ := json.Marshal(map[string]string{"command": c.command})
				out, err := tl.Run(t.Context(), args)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if !strings.Contains(out, c.want) {
					t.Errorf("output %q\nwant it to contain %q", out, c.want)
				}
				for _, p := range c.absent {
					if _, err := os.Lstat(filepath.Join(work, p)); err == nil {
						t.Errorf("%s is there, want it refused", p)
					}
				}
				for _, p := range c.present {
					if _, err := os.Lstat(filepath.Join(work, p)); err != nil {
						t.Errorf("%s: %v, want it there", p, err)
					}
				}
				for _, p := range c.dirs {
					if fi, err := os.Lstat(filepath.Join(work, p)); err != nil || !fi.IsDir() {
						t.Errorf("%s: %v, %v; want a directory", p, fi, err)
					}
				}
			})
		}
	}
}
