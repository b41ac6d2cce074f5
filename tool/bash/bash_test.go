package bash_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/bash"
)

// fakeExec records commands and answers with a fixed result.
type fakeExec struct {
	res sandbox.Result
	err error

	mu   sync.Mutex
	cmds []sandbox.Cmd
}

func (*fakeExec) Name() string { return "fake" }

func (f *fakeExec) Exec(_ context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = append(f.cmds, c)
	return f.res, f.err
}

func (f *fakeExec) last(t *testing.T) sandbox.Cmd {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cmds) == 0 {
		t.Fatal("the executor was not called")
	}
	return f.cmds[len(f.cmds)-1]
}

func (f *fakeExec) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.cmds)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := bash.RunBash(&fakeExec{}, t.TempDir(), bash.Options{}).Spec()
	if spec.Name != "run_bash" || spec.Effect != tool.Reversible {
		t.Errorf("name %q, effect %v; want run_bash, reversible", spec.Name, spec.Effect)
	}
	if got := spec.ArgsWith(tool.RoleCommand); len(got) != 1 || got[0] != "command" {
		t.Errorf("command args %v, want [command]", got)
	}
	if got := spec.ArgsWith(tool.RoleDir); len(got) != 1 || got[0] != "workdir" {
		t.Errorf("dir args %v, want [workdir]", got)
	}
	for _, want := range []string{"working directory", "default 120", "at most 600", "cut", "refused by policy", "privilege", "Network"} {
		if !strings.Contains(spec.Description, want) {
			t.Errorf("description lacks %q: %s", want, spec.Description)
		}
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		args    string
		timeout time.Duration // of the command run; 0: refused
	}{
		{"plain", `{"command":"ls"}`, 120 * time.Second},
		{"4096 characters", mustJSON(bash.Args{Command: strings.Repeat("a", 4096)}), 120 * time.Second},
		{"4096 two-byte characters", mustJSON(bash.Args{Command: strings.Repeat("é", 4096)}), 120 * time.Second},
		{"timeout 1", `{"command":"ls","timeout_s":1}`, time.Second},
		{"timeout 600", `{"command":"ls","timeout_s":600}`, 600 * time.Second},
		{"workdir dot", `{"command":"ls","workdir":"."}`, 120 * time.Second},

		{"no command", `{}`, 0},
		{"empty command", `{"command":""}`, 0},
		{"blank command", `{"command":" \t\n"}`, 0},
		{"4097 characters", mustJSON(bash.Args{Command: strings.Repeat("a", 4097)}), 0},
		{"NUL in command", `{"command":"ls\u0000-la"}`, 0},
		{"command not a string", `{"command":["ls"]}`, 0},
		{"timeout 0", `{"command":"ls","timeout_s":0}`, 0},
		{"timeout 601", `{"command":"ls","timeout_s":601}`, 0},
		{"timeout negative", `{"command":"ls","timeout_s":-5}`, 0},
		{"timeout fraction", `{"command":"ls","timeout_s":1.5}`, 0},
		{"timeout string", `{"command":"ls","timeout_s":"5"}`, 0},
		{"empty workdir", `{"command":"ls","workdir":""}`, 0},
		{"NUL in workdir", `{"command":"ls","workdir":"a\u0000b"}`, 0},
		{"unknown field", `{"command":"ls","cwd":"/"}`, 0},
		{"not an object", `["ls"]`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ex := &fakeExec{}
			tl := bash.RunBash(ex, root, bash.Options{})
			_, err := tl.Run(t.Context(), json.RawMessage(c.args))
			if c.timeout == 0 {
				if !errors.Is(err, tool.ErrArgs) {
					t.Errorf("Run(%s) error = %v, want ErrArgs", c.args, err)
				}
				if ex.calls() != 0 {
					t.Errorf("Run(%s) ran a command with refused arguments", c.args)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run(%.80s): %v", c.args, err)
			}
			cmd := ex.last(t)
			if cmd.Timeout != c.timeout || cmd.Dir != real || cmd.Env != nil || cmd.Stdin != "" {
				t.Errorf("ran %+v; want timeout %v in %s, executor's env, no stdin", cmd, c.timeout, real)
			}
			var a bash.Args
			json.Unmarshal([]byte(c.args), &a)
			if cmd.Script != a.Command {
				t.Errorf("ran script %.40q, want the command %.40q unchanged", cmd.Script, a.Command)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	env := []string{"A=1"}
	ex := &fakeExec{}
	tl := bash.RunBash(ex, root, bash.Options{Env: env, MaxTimeout: 30 * time.Second, DefaultTimeout: time.Hour})
	env[0] = "A=changed"
	if d := tl.Spec().Description; !strings.Contains(d, "default 30") || !strings.Contains(d, "at most 30") {
		t.Errorf("description %q, want default and maximum 30", d)
	}
	if _, err := tl.Run(t.Context(), json.RawMessage(`{"command":"x","timeout_s":31}`)); !errors.Is(err, tool.ErrArgs) {
		t.Errorf("timeout_s 31 over a 30 s maximum: error %v, want ErrArgs", err)
	}
	if _, err := tl.Run(t.Context(), json.RawMessage(`{"command":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if c := ex.last(t); c.Timeout != 30*time.Second || len(c.Env) != 1 || c.Env[0] != "A=1" {
		t.Errorf("ran %+v; want the default capped at 30 s and Env as given at construction", c)
	}
}

func TestExecErrors(t *testing.T) {
	t.Parallel()
	stop := errors.New("user pressed stop")
	for _, want := range []error{
		fmt.Errorf("%w: %w", sandbox.ErrStart, errors.New("fork: resource temporarily unavailable")),
		fmt.Errorf("%w: %w", sandbox.ErrAborted, stop),
		sandbox.ErrUnsupported,
	} {
		ex := &fakeExec{err: want}
		out, err := bash.RunBash(ex, t.TempDir(), bash.Options{}).Run(t.Context(), json.RawMessage(`{"command":"true"}`))
		if !errors.Is(err, want) || out != "" {
			t.Errorf("executor error %v: Run = %q, %v; want it wrapped", want, out, err)
		}
	}
}

// A dead sandbox is rein's failure: the tool's error wraps tool.ErrFatal
// (the loop stops the run on it) and says why; an ordinary start failure
// does not.
func TestDeadSandboxIsFatal(t *testing.T) {
	t.Parallel()
	dead := fmt.Errorf("%w: the zygote died again", sandbox.ErrExecutorDead)
	_, err := bash.RunBash(&fakeExec{err: dead}, t.TempDir(), bash.Options{}).Run(t.Context(), json.RawMessage(`{"command":"true"}`))
	if !errors.Is(err, tool.ErrFatal) || !errors.Is(err, sandbox.ErrExecutorDead) || strings.Contains(err.Error(), "try again") {
		t.Errorf("dead sandbox: %v; want tool.ErrFatal wrapping ErrExecutorDead, with no advice to retry", err)
	}
	_, err = bash.RunBash(&fakeExec{err: sandbox.ErrStart}, t.TempDir(), bash.Options{}).Run(t.Context(), json.RawMessage(`{"command":"true"}`))
	if errors.Is(err, tool.ErrFatal) {
		t.Errorf("a start failure is fatal: %v", err)
	}
}

// A non-zero exit and a timeout are results the model sees, not errors.
func TestResultsAreNotErrors(t *testing.T) {
	t.Parallel()
	for _, res := range []sandbox.Result{
		{ExitCode: 2, Stderr: "ls: cannot access 'x'\n", StderrBytes: 22},
		{ExitCode: -1, Signal: "killed", TimedOut: true},
		{ExitCode: -1, Signal: "segmentation fault"},
	} {
		out, err := bash.RunBash(&fakeExec{res: res}, t.TempDir(), bash.Options{}).Run(t.Context(), json.RawMessage(`{"command":"x","timeout_s":7}`))
		if err != nil || out == "" {
			t.Errorf("result %+v: Run = %q, %v; want a text result", res, out, err)
		}
	}
}

func BenchmarkRunFake(b *testing.B) {
	ex := &fakeExec{res: sandbox.Result{Stdout: "hello\n", StdoutBytes: 6}}
	tl := bash.RunBash(ex, b.TempDir(), bash.Options{})
	args := json.RawMessage(`{"command":"echo hello","timeout_s":5,"workdir":"."}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tl.Run(b.Context(), args); err != nil {
			b.Fatal(err)
		}
		ex.mu.Lock()
		ex.cmds = ex.cmds[:0]
		ex.mu.Unlock()
	}
}
