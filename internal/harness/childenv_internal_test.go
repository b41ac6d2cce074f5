package harness

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/sandbox/docker"
	"github.com/reinhq/rein/secret"
)

// envRecorder is an executor that records the environment it is given.
type envRecorder struct{ env *[]string }

func (envRecorder) Name() string { return "recorder" }

func (r envRecorder) Exec(_ context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	*r.env = c.Env
	return sandbox.Result{}, nil
}

// TestSessionEnvPerBackend: every backend's commands get sandbox.ChildEnv,
// placed as the backend has it, with the session's id and token; a
// container gets nothing of rein's environment; a caller's own
// environment is kept as given.
func TestSessionEnvPerBackend(t *testing.T) {
	t.Parallel()
	host := []string{"PATH=/hbin", "HOME=/h", "USER=u", "OPENAI_API_KEY=sk-x", "LD_PRELOAD=/evil.so"}
	tok, err := secret.NewSessionToken()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		backend string
		want    []string
	}{
		{SandboxNone, sandbox.ChildEnv(host, sandbox.Inside{Session: "s1", Token: tok.Value()})},
		{SandboxLandlock, sandbox.ChildEnv(host, sandbox.Inside{Session: "s1", Token: tok.Value()})},
		{SandboxDocker, sandbox.ChildEnv(nil, docker.Inside())},
		{"podman", sandbox.ChildEnv(nil, docker.Inside())},
	} {
		var got []string
		h, in := childInside(c.backend, host)
		s := sessionEnv{Executor: envRecorder{&got}, host: h, inside: in, session: "s1", token: tok}
		if _, err := s.Exec(t.Context(), sandbox.Cmd{Script: "env"}); err != nil {
			t.Fatal(err)
		}
		if c.backend == SandboxDocker || c.backend == "podman" {
			c.want = append(c.want, "REIN_SESSION=s1", "REIN_SESSION_TOKEN="+tok.Value())
			slices.Sort(c.want)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: the command gets\n %q\nwant\n %q", c.backend, got, c.want)
		}
		for _, kv := range got {
			if kv == "OPENAI_API_KEY=sk-x" || kv == "LD_PRELOAD=/evil.so" || c.backend == SandboxDocker && kv == "PATH=/hbin" {
				t.Errorf("%s: %s reached the command", c.backend, kv)
			}
		}
		if _, err := s.Exec(t.Context(), sandbox.Cmd{Script: "env", Env: []string{"ONLY=1"}}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"ONLY=1"}) {
			t.Errorf("%s: a caller's environment became %q", c.backend, got)
		}
	}
}

// reporter is an envRecorder that says whether it stages.
type reporter struct {
	envRecorder
	why error
}

func (r reporter) StageErr() error { return r.why }

// TestSessionEnvStageReport: the session's wrapper says whether commands
// are staged only when its backend can say so; over one that cannot
// (sandbox.Local) it claims nothing, so run_bash watches every command.
func TestSessionEnvStageReport(t *testing.T) {
	var env []string
	why := errors.New("no overlay")
	for _, c := range []struct {
		name     string
		ex       sandbox.Executor
		reporter bool
		err      error
	}{
		{"local", envRecorder{&env}, false, nil},
		{"stages", reporter{envRecorder{&env}, nil}, true, nil},
		{"cannot stage", reporter{envRecorder{&env}, why}, true, why},
	} {
		rep, ok := withSessionEnv(sessionEnv{Executor: c.ex}).(sandbox.StageReporter)
		if ok != c.reporter {
			t.Errorf("%s: a StageReporter %v, want %v", c.name, ok, c.reporter)
			continue
		}
		if ok && rep.StageErr() != c.err {
			t.Errorf("%s: StageErr %v, want %v", c.name, rep.StageErr(), c.err)
		}
	}
}
