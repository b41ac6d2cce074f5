//go:build linux

package sandbox_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
)

// newStaged is a landlock executor that stages; it skips where no
// overlay can be mounted (unless REIN_REQUIRE names overlay).
func newStaged(t *testing.T) (*sandbox.Landlock, string) {
	t.Helper()
	l, work := newLandlock(t, &sandbox.Landlock{Stage: true})
	if _, err := l.Exec(t.Context(), sandbox.Cmd{Script: "true", Dir: work}); err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if err := l.StageErr(); err != nil {
		testenv.Need(t, "overlay", err)
	}
	return l, work
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func changes(s *sandbox.Staged) []string {
	var out []string
	for _, c := range s.Changes {
		out = append(out, c.Kind.String()+" "+filepath.ToSlash(c.Path))
	}
	slices.Sort(out)
	return out
}

// TestStagedWritesWaitForApply: a staged command's writes reach the work
// dir only when applied; the command reads its own writes meanwhile.
func TestStagedWritesWaitForApply(t *testing.T) {
	l, work := newStaged(t)
	write(t, filepath.Join(work, "keep"), "k")
	write(t, filepath.Join(work, "edit"), "old")
	write(t, filepath.Join(work, "same"), "s")
	write(t, filepath.Join(work, "d/a"), "a")
	write(t, filepath.Join(work, "d/e/b"), "b")
	script := `echo new > edit && cat edit && echo n > made && mkdir -p n/m && ln -s ../keep n/m/l && rm -r d && touch same && cat same >/dev/null && : >> same`
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: script, Dir: work, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if res.ExitCode != 0 || res.Stdout != "new\n" {
		t.Fatalf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res.Staged == nil {
		t.Fatal("no Staged result")
	}
	if b, _ := os.ReadFile(filepath.Join(work, "edit")); string(b) != "old" {
		t.Errorf("edit is %q before Apply; the write went through", b)
	}
	if _, err := os.Stat(filepath.Join(work, "d/e/b")); err != nil {
		t.Errorf("d/e/b gone before Apply: %v", err)
	}
	want := []string{"created made", "created n", "created n/m", "created n/m/l", "deleted d", "deleted d/a", "deleted d/e", "deleted d/e/b", "modified edit"}
	if got := changes(res.Staged); !slices.Equal(got, want) {
		t.Errorf("changes\n got %q\nwant %q", got, want)
	}
	var saved []string
	done, err := res.Staged.Apply(nil, func(rel string) error { saved = append(saved, filepath.ToSlash(rel)); return nil })
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if len(done) != len(want) {
		t.Errorf("applied %d changes, want %d", len(done), len(want))
	}
	slices.Sort(saved)
	if w := []string{"d/a", "d/e/b", "edit", "made", "n/m/l"}; !slices.Equal(saved, w) {
		t.Errorf("before called on %q, want %q", saved, w)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "edit")); string(b) != "new\n" {
		t.Errorf("edit is %q after Apply", b)
	}
	if _, err := os.Stat(filepath.Join(work, "d")); !os.IsNotExist(err) {
		t.Errorf("d still there after Apply: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(work, "n/m/l")); err != nil || target != "../keep" {
		t.Errorf("link: %q, %v", target, err)
	}
	// The next command sees the applied state, with no overlay left.
	res, err = l.Exec(t.Context(), sandbox.Cmd{Script: `cat edit; ls`, Dir: work})
	if err != nil || !strings.HasPrefix(res.Stdout, "new\n") {
		t.Fatalf("after apply: %q %v", res.Stdout, err)
	}
	if err := res.Staged.Discard(); err != nil {
		t.Fatal(err)
	}
}

// TestStagedDiscard: discarded writes never reach the work dir.
func TestStagedDiscard(t *testing.T) {
	l, work := newStaged(t)
	write(t, filepath.Join(work, "f"), "f")
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: `rm -rf ./* .[!.]* ; echo x > g; ls | wc -l`, Dir: work})
	if err != nil || res.Stdout != "1\n" {
		t.Fatalf("%q %q %v", res.Stdout, res.Stderr, err)
	}
	if err := res.Staged.Discard(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(work)
	if len(ents) != 1 || ents[0].Name() != "f" {
		t.Errorf("work dir after discard: %v", ents)
	}
	var n int
	_ = fs.WalkDir(os.DirFS(os.TempDir()), ".", func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() && strings.HasPrefix(d.Name(), "rein-stage-") {
			n++
		}
		if p != "." && d != nil && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	_ = n
}

// TestStagedBuildAndCommit: go build of a small module and git commit
// work inside a staged command, and their results are applied.
func TestStagedBuildAndCommit(t *testing.T) {
	l, work := newStaged(t)
	env := sandbox.MinimalEnv()
	for _, tool := range []string{"git", "go"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
		env = append(env, "PATH="+filepath.Dir(p)+":/usr/bin:/bin")
	}
	write(t, filepath.Join(work, "go.mod"), "module example.com/m\n\ngo 1.21\n")
	write(t, filepath.Join(work, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built\") }\n")
	env = append(env, "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	run := func(script string) sandbox.Result {
		t.Helper()
		res, err := l.Exec(t.Context(), sandbox.Cmd{Script: script, Dir: work, Env: env, Timeout: 600 * time.Second})
		if err != nil {
			t.Fatalf("Exec %q: %v", script, err)
		}
		if res.ExitCode != 0 {
			t.Fatalf("%q: exit %d\nstdout %s\nstderr %s", script, res.ExitCode, res.Stdout, res.Stderr)
		}
		if _, err := res.Staged.Apply(nil, nil); err != nil {
			t.Fatalf("Apply after %q: %v", script, err)
		}
		return res
	}
	run(`git init -q . && git add go.mod main.go && git commit -qm first`)
	res := run(`git log --format=%s && git status --porcelain`)
	if !strings.HasPrefix(res.Stdout, "first\n") {
		t.Errorf("git log after the commit: %q", res.Stdout)
	}
	out, err := exec.Command("git", "-C", work, "log", "--format=%s").Output()
	if err != nil || string(out) != "first\n" {
		t.Errorf("git log in the work dir, outside the sandbox: %q, %v", out, err)
	}
	// A cold build cache (the sandbox's private HOME) compiles the
	// runtime: minutes on a loaded machine.
	if testing.Short() {
		t.Skip("go build with a cold cache is slow: skipped with -short")
	}
	run(`go build -o app . && ./app`)
	if _, err := os.Stat(filepath.Join(work, "app")); err != nil {
		t.Fatalf("the built binary was not applied: %v", err)
	}
}

// BenchmarkStage measures what staging adds to a command: `true`, and a
// command writing one file, each staged (overlay mount, the command,
// unmount, reading the upper dir, applying) and not, interleaved in one
// loop; it reports each one's mean and the ratios.
func BenchmarkStage(b *testing.B) {
	plain, pw := newLandlock(b, &sandbox.Landlock{})
	staged, sw := newLandlock(b, &sandbox.Landlock{Stage: true})
	ctx := b.Context()
	if _, err := staged.Exec(ctx, sandbox.Cmd{Script: "true", Dir: sw}); err != nil {
		b.Fatal(err)
	}
	testenv.Need(b, "overlay", staged.StageErr())
	if _, err := plain.Exec(ctx, sandbox.Cmd{Script: "true", Dir: pw}); err != nil {
		b.Fatal(err)
	}
	type variant struct {
		name string
		ex   *sandbox.Landlock
		dir  string
		cmd  string
		sum  time.Duration
	}
	vs := []*variant{
		{name: "true", ex: plain, dir: pw, cmd: "true"},
		{name: "true-staged", ex: staged, dir: sw, cmd: "true"},
		{name: "write", ex: plain, dir: pw, cmd: "echo x > f"},
		{name: "write-staged", ex: staged, dir: sw, cmd: "echo x > f"},
	}
	n := 0
	for b.Loop() {
		n++
		for _, v := range vs {
			start := time.Now()
			res, err := v.ex.Exec(ctx, sandbox.Cmd{Script: v.cmd, Dir: v.dir})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%s: %v %s", v.name, err, res.Stderr)
			}
			if res.Staged != nil {
				if _, err := res.Staged.Apply(nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			v.sum += time.Since(start)
		}
	}
	ms := func(v *variant) float64 { return float64(v.sum.Microseconds()) / 1000 / float64(n) }
	for _, v := range vs {
		b.ReportMetric(ms(v), v.name+"-ms/op")
	}
	b.ReportMetric(ms(vs[1])/ms(vs[0]), "true-staged/true")
	b.ReportMetric(ms(vs[3])/ms(vs[2]), "write-staged/write")
	b.ReportMetric(ms(vs[1])-ms(vs[0]), "true-added-ms")
	b.ReportMetric(ms(vs[3])-ms(vs[2]), "write-added-ms")
}

// A stage dir goes whole, whatever modes overlayfs and the command left
// in it (as another user than root, through the walk that gives the
// permissions back).
func TestRemoveStageDirModes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "cmd-1")
	for _, d := range []string{"work/work", "upper/a/locked", "upper/b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "upper/a/locked/f"), []byte("x"), 0o400); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"work/work", "upper/a/locked", "upper/b"} {
		if err := os.Chmod(filepath.Join(dir, d), 0); err != nil {
			t.Fatal(err)
		}
	}
	sandbox.RemoveStageDir(dir)
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the stage dir is still there: %v", err)
	}
}

// The stage of a command that wrote nothing goes by name; one that holds
// anything else is left to the general removal, and goes whole too.
func TestRemoveStageDirEmptyAndNot(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		dirs  []string
		files []string
	}{
		{"empty, volatile", []string{"work/work/incompat/volatile", "upper"}, []string{"work/work/incompat/volatile/dirty"}},
		{"empty, not volatile", []string{"work/work", "upper"}, nil},
		{"a file written", []string{"work/work", "upper/sub"}, []string{"upper/sub/f"}},
		{"something of overlayfs's own", []string{"work/work", "work/index", "upper"}, []string{"work/work/x"}},
	} {
		dir := filepath.Join(t.TempDir(), "cmd-1")
		for _, d := range c.dirs {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range c.files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(filepath.Join(dir, "work/work"), 0); err != nil {
			t.Fatal(err)
		}
		sandbox.RemoveStageDir(dir)
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the stage dir is still there: %v", c.name, err)
		}
	}
}
