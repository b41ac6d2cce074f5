package bash_test

import (
	"errors"
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
