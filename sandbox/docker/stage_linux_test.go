package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool/bash"
)

// needStage skips (or fails, under REIN_REQUIRE) where the docker backend
// cannot stage: not root, or no overlay by descriptor.
func needStage(tb testing.TB) {
	tb.Helper()
	testenv.Need(tb, "overlay", stageSupported())
}

func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func readFile(tb testing.TB, p string) string {
	tb.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestDockerStagedWrites: a command's creations, changes and deletions are
// staged, invisible in the work dir until Apply, seen by the command
// itself, and applied exactly.
func TestDockerStagedWrites(t *testing.T) {
	needStage(t)
	work := tempDir(t)
	writeFiles(t, work, map[string]string{"keep": "k", "change": "old", "gone": "g", "dir/a": "a", "dir/b": "b"})
	e, _ := start(t, Options{WorkDir: work, Stage: true, Session: "stage-test-" + randomHex(4)})
	if err := e.StageErr(); err != nil {
		t.Fatalf("StageErr: %v", err)
	}
	res := run(t, e, work, "echo new > change && rm gone && rm -r dir && echo c > created && mkdir -p sub/deep && echo d > sub/deep/f && cat change created")
	if res.ExitCode != 0 || res.Stdout != "new\nc\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q: the command should read its own writes", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res.Staged == nil {
		t.Fatal("Result.Staged is nil: the writes were not staged")
	}
	for p, want := range map[string]string{"change": "old", "gone": "g", "dir/a": "a", "created": "<open " + filepath.Join(work, "created") + ": no such file or directory>"} {
		if got := readFile(t, filepath.Join(work, p)); got != want {
			t.Errorf("before Apply, %s = %q, want %q", p, got, want)
		}
	}
	var got []string
	for _, c := range res.Staged.Changes {
		got = append(got, c.Kind.String()+" "+filepath.ToSlash(c.Path))
	}
	slices.Sort(got)
	want := []string{"created created", "created sub", "created sub/deep", "created sub/deep/f", "deleted dir", "deleted dir/a", "deleted dir/b", "deleted gone", "modified change"}
	if !slices.Equal(got, want) {
		t.Errorf("Changes:\n got %q\nwant %q", got, want)
	}
	if _, err := res.Staged.Apply(nil, nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	for p, want := range map[string]string{"change": "new\n", "created": "c\n", "sub/deep/f": "d\n", "keep": "k"} {
		if got := readFile(t, filepath.Join(work, p)); got != want {
			t.Errorf("after Apply, %s = %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"gone", "dir"} {
		if _, err := os.Lstat(filepath.Join(work, p)); err == nil {
			t.Errorf("after Apply, %s still exists", p)
		}
	}
	// The next command sees the applied state through a fresh overlay.
	if res := run(t, e, work, "cat change; ls"); res.Stdout != "new\nchange\ncreated\nkeep\nsub\n" {
		t.Errorf("the next command sees %q", res.Stdout)
	}
	if res.Staged.Upper() == "" || strings.HasPrefix(res.Staged.Upper(), work) {
		t.Errorf("the upper dir %q should lie outside the work dir", res.Staged.Upper())
	}
}

// TestDockerStagedMasks: the overlay hides the container's credential
// masks, so rein mounts them again over it: a staged command reads an
// empty .env and cannot write it, while the lower layer holds the secret.
func TestDockerStagedMasks(t *testing.T) {
	needStage(t)
	work := tempDir(t)
	writeFiles(t, work, map[string]string{".env": "SECRET=planted", "src/.netrc": "machine x password planted", "ok": "fine"})
	e, _ := start(t, Options{WorkDir: work, Stage: true, Session: "stage-test-" + randomHex(4)})
	res := run(t, e, work, "cat .env src/.netrc ok; echo; echo x > .env; echo s=$?; rm .env; echo r=$?")
	if strings.Contains(res.Stdout, "planted") {
		t.Fatalf("a staged command read a masked credential: %q", res.Stdout)
	}
	if !strings.Contains(res.Stdout, "fine") || !strings.Contains(res.Stdout, "s=1") || strings.Contains(res.Stdout, "r=0") {
		t.Errorf("stdout %q stderr %q: want the plain file read, the mask neither written nor removed", res.Stdout, res.Stderr)
	}
	if res.Staged == nil {
		t.Fatal("not staged")
	}
	defer res.Staged.Discard()
	for _, c := range res.Staged.Changes {
		if strings.Contains(c.Path, ".env") || strings.Contains(c.Path, ".netrc") {
			t.Errorf("a masked credential was changed: %v", c)
		}
	}
	// The control: unstaged, the same container masks the same files.
	u, _ := start(t, Options{WorkDir: work, Session: "stage-test-" + randomHex(4)})
	if res := run(t, u, work, "cat .env src/.netrc"); strings.Contains(res.Stdout, "planted") {
		t.Fatalf("unstaged, a masked credential was read: %q", res.Stdout)
	}
	if res := run(t, u, work, "cat ok"); res.Stdout != "fine" {
		t.Fatalf("unstaged control: %q", res.Stdout)
	}
}

// TestDockerStagedProtectedWrite: a write to .git/hooks, read-only in the
// unstaged container, lands in the overlay and so in Changes, where
// run_bash refuses it after the fact (tool/bash TestStagingDocker); the
// work dir keeps the original.
func TestDockerStagedProtectedWrite(t *testing.T) {
	needStage(t)
	work := tempDir(t)
	writeFiles(t, work, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n"})
	e, _ := start(t, Options{WorkDir: work, Stage: true, Session: "stage-test-" + randomHex(4)})
	res := run(t, e, work, "echo evil > .git/hooks/pre-commit && echo evil > .git/hooks/post-checkout")
	if res.Staged == nil {
		t.Fatalf("not staged (exit %d, %q)", res.ExitCode, res.Stderr)
	}
	defer res.Staged.Discard()
	var paths []string
	for _, c := range res.Staged.Changes {
		paths = append(paths, filepath.ToSlash(c.Path))
	}
	slices.Sort(paths)
	if want := []string{".git/hooks/post-checkout", ".git/hooks/pre-commit"}; !slices.Equal(paths, want) {
		t.Errorf("Changes %q, want %q", paths, want)
	}
	if got := readFile(t, filepath.Join(work, ".git/hooks/pre-commit")); got != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the hook changed before anything was applied: %q", got)
	}
}

// TestDockerStagedRunBash runs commands through run_bash on a staged
// container, as a session does: writes to .git/hooks and .git/config are
// refused after the fact whatever the command looked like, the rest is
// applied and saved first, a mass delete of the work dir asks and, told
// no, leaves every file, and a build's outputs are applied.
func TestDockerStagedRunBash(t *testing.T) {
	needStage(t)
	for _, c := range []struct {
		name      string
		command   string
		answer    bool
		want      string
		asked     bool
		unchanged []string // still as written before
		present   []string
	}{
		{name: "hooks and config refused and the rest applied",
			command:   `sh -c "$(printf 'echo evil > .git/hooks/post-checkout; echo "[core] hooksPath=/tmp" >> .git/config; echo ok > notes')"`,
			want:      "refused, as protected paths: .git/config, .git/hooks/post-checkout",
			unchanged: []string{".git/config"}, present: []string{"notes"}},
		{name: "deleting the work dir asks; no", command: "rm -rf ./* ./.git", answer: false,
			want: "NOT applied", asked: true, unchanged: []string{".git/config", "src/f50.c"}},
		{name: "a build's outputs applied", command: "mkdir out && for f in src/*.c; do sed s/int/long/ $f > out/$(basename $f .c).o; done && tar cf out/dist.tar out/*.o && ls out | wc -l",
			want: "files created", present: []string{"out/dist.tar", "out/f1.o", "out/f120.o"}, unchanged: []string{"src/f1.c"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := tempDir(t)
			files := map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", ".git/hooks/pre-commit.sample": "#!/bin/sh\n"}
			for i := 1; i <= 120; i++ {
				files[fmt.Sprintf("src/f%d.c", i)] = "int x;\n"
			}
			writeFiles(t, work, files)
			e, _ := start(t, Options{WorkDir: work, Stage: true, Session: "stage-bash-" + randomHex(4)})
			var saved []string
			asked := false
			st := bash.Staging{
				Snapshot: func(rel string) error { saved = append(saved, rel); return nil },
				Ask:      func(context.Context, string) (bool, error) { asked = true; return c.answer, nil },
			}
			tl := bash.RunBash(e, work, bash.Options{Staging: &st, Quarantine: t.TempDir()})
			args, _ := json.Marshal(map[string]string{"command": c.command})
			out, err := tl.Run(t.Context(), args)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output %q\nwant it to contain %q", out, c.want)
			}
			if asked != c.asked {
				t.Errorf("asked %v, want %v", asked, c.asked)
			}
			for _, p := range c.unchanged {
				if got := readFile(t, filepath.Join(work, p)); got != files[p] {
					t.Errorf("%s = %q, want it unchanged", p, got)
				}
			}
			for _, p := range c.present {
				if _, err := os.Lstat(filepath.Join(work, p)); err != nil {
					t.Errorf("%s: %v, want it applied", p, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(work, ".git/hooks/post-checkout")); err == nil {
				t.Error("the hook was written")
			}
			for _, p := range saved {
				if strings.HasPrefix(filepath.ToSlash(p), ".git/hooks") || p == ".git/config" {
					t.Errorf("a refused path was saved for applying: %s", p)
				}
			}
		})
	}
}

// BenchmarkDockerStage measures what staging adds to a docker command:
// `true`, and a command writing one file, each staged (the overlay built
// and attached in the container, the command, unmount, reading the upper
// dir, applying) and not, interleaved in one loop; it reports each one's
// mean, the ratios and the time added.
func BenchmarkDockerStage(b *testing.B) {
	needStage(b)
	plain, pw := start(b, Options{Session: "stage-bench-" + randomHex(4)})
	staged, sw := start(b, Options{Stage: true, Session: "stage-bench-" + randomHex(4)})
	if err := staged.StageErr(); err != nil {
		b.Fatal(err)
	}
	type variant struct {
		name string
		ex   *Executor
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
			res, err := v.ex.Exec(b.Context(), sandbox.Cmd{Script: v.cmd, Dir: v.dir, Timeout: time.Minute})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%s: %v %s", v.name, err, res.Stderr)
			}
			if res.Staged != nil {
				if _, err := res.Staged.Apply(nil, nil); err != nil {
					b.Fatal(err)
				}
			} else if v.ex == staged {
				b.Fatalf("%s: not staged", v.name)
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

// TestDockerStagedRestart: a container that dies between commands is
// replaced, and the next command is staged in the new one (rein enters
// the new container's namespaces); Close while a staged command runs
// ends it without a panic from the namespace thread.
func TestDockerStagedRestart(t *testing.T) {
	needStage(t)
	e, work := start(t, Options{Stage: true, Session: "stage-restart-" + randomHex(4)})
	first := e.ID()
	if _, err := e.run(t.Context(), "rm", "-f", first); err != nil {
		t.Fatal(err)
	}
	res := run(t, e, work, "echo b > b")
	if e.ID() == first {
		t.Fatal("the container was not replaced")
	}
	if res.Staged == nil || e.StageErr() != nil {
		t.Fatalf("not staged in the new container: %v", e.StageErr())
	}
	if _, err := res.Staged.Apply(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(work, "b")); got != "b\n" {
		t.Fatalf("b = %q", got)
	}
	done := make(chan error, 1)
	go func() {
		res, err := e.Exec(context.Background(), sandbox.Cmd{Script: "sleep 30", Dir: work, Timeout: time.Minute})
		if res.Staged != nil {
			res.Staged.Discard()
		}
		done <- err
	}()
	time.Sleep(2 * time.Second) // let it start; the outcome does not depend on it
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Exec did not return after Close")
	}
}

// TestDockerStagedLeftoverKilled: a process a staged command left behind,
// out of its process group and session, is killed when the command ends,
// so it writes neither straight to the work dir between commands nor into
// a later command's overlay; the container's own init and sleep live on.
func TestDockerStagedLeftoverKilled(t *testing.T) {
	needStage(t)
	e, work := start(t, Options{Stage: true, Session: "stage-leftover-" + randomHex(4)})
	// By absolute path from / : after the command's overlay is detached,
	// the path leads to the work dir itself.
	res := run(t, e, work, `w=$PWD; setsid sh -c "cd /; sleep 3; echo late > $w/late" >/dev/null 2>&1 < /dev/null & sleep 1; echo started`)
	if res.Staged == nil || res.Stdout != "started\n" {
		t.Fatalf("staged %v, stdout %q, stderr %q", res.Staged != nil, res.Stdout, res.Stderr)
	}
	res.Staged.Discard()
	time.Sleep(5 * time.Second) // past the leftover's sleep: it would have written by now
	if _, err := os.Lstat(filepath.Join(work, "late")); err == nil {
		t.Fatal("a leftover of a staged command wrote straight to the work dir")
	}
	res = run(t, e, work, "ls -A")
	defer res.Staged.Discard()
	if strings.Contains(res.Stdout, "late") {
		t.Fatalf("the leftover wrote: %q", res.Stdout)
	}
	if got := run(t, e, work, "echo alive").Stdout; got != "alive\n" {
		t.Fatalf("the container did not survive the sweep: %q", got)
	}
}

// TestDockerMustStage: a command that must be staged (Cmd.MustStage)
// comes back staged or did not run (sandbox.ErrNotStaged): in a container
// not asked to stage, and in one whose staging stopped — as when a
// restarted container's mount namespace cannot be entered — where
// without MustStage it would write straight to the work dir.
func TestDockerMustStage(t *testing.T) {
	needStage(t)
	for _, c := range []struct {
		name   string
		opts   Options
		off    error // staging stopped after the first command
		reason string
	}{
		{"staging", Options{Stage: true}, nil, ""},
		{"not asked to stage", Options{}, nil, "not asked to stage"},
		{"staging stopped", Options{Stage: true}, errors.New("the mount namespace went away"), "the mount namespace went away"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Session = "muststage-" + randomHex(4)
			e, work := start(t, c.opts)
			if res := run(t, e, work, "true"); res.Staged != nil {
				_ = res.Staged.Discard()
			}
			if c.off != nil {
				e.stageFailed(c.off)
			}
			res, err := e.Exec(t.Context(), sandbox.Cmd{Script: "echo x > m", Dir: work, Timeout: 30 * time.Second, MustStage: true})
			if _, serr := os.Lstat(filepath.Join(work, "m")); serr == nil {
				t.Error("m is in the work dir: the command wrote straight to it")
			}
			if c.reason == "" {
				if err != nil || res.Staged == nil {
					t.Fatalf("staged %v, err %v; want it staged", res.Staged != nil, err)
				}
				_ = res.Staged.Discard()
				return
			}
			if !errors.Is(err, sandbox.ErrNotStaged) || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("err %v; want ErrNotStaged saying %q", err, c.reason)
			}
			// Without MustStage the command runs, unstaged.
			if res := run(t, e, work, "echo x > m"); res.Staged != nil {
				t.Fatal("staged without staging")
			}
			if got := readFile(t, filepath.Join(work, "m")); got != "x\n" {
				t.Errorf("m = %q after an unstaged run", got)
			}
		})
	}
}

// TestDockerHeldWhileOpen: the docker executor's temp dirs (the mask
// source, the stage root) are held while it lives, so another executor's
// sweep leaves them, and removed by Close; a killed rein's are swept
// (sandbox.TestSweepHeld).
func TestDockerHeldWhileOpen(t *testing.T) {
	needStage(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e, work := start(t, Options{Stage: true, Session: "held-" + randomHex(4)})
	if res := run(t, e, work, "echo x > f"); res.Staged != nil {
		_ = res.Staged.Discard()
	}
	made, _ := filepath.Glob(filepath.Join(tmp, "rein-docker-*-h*"))
	if len(made) != 2 {
		t.Fatalf("held dirs %v, want the mask source and the stage root", made)
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, d := range made {
		_ = os.Chtimes(d, old, old)
	}
	if n := sandbox.SweepHeld(); n != 0 {
		t.Errorf("a live executor's dirs were swept: %d", n)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "rein-*")); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
}
