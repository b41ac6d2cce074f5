package harness

import (
	"context"
	"os"
	"strings"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/sandbox/docker"
	"github.com/reinhq/rein/secret"
)

// sessionEnv gives every command of a session the environment of
// sandbox.ChildEnv (PATH, HOME, USER, LANG, LC_ALL, TERM, TMPDIR, nothing
// else of rein's) plus REIN_SESSION and REIN_SESSION_TOKEN, whatever the
// backend. A command whose caller set its environment (Cmd.Env non-nil)
// keeps it.
type sessionEnv struct {
	sandbox.Executor
	host    []string       // what ChildEnv keeps variables from
	inside  sandbox.Inside // where the backend places HOME, TMPDIR and PATH
	session string
	token   *secret.SessionToken
}

// Exec runs c with the session's environment.
func (s sessionEnv) Exec(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	if c.Env == nil {
		in := s.inside
		in.Session, in.Token = s.session, s.token.Value()
		c.Env = sandbox.ChildEnv(s.host, in)
	}
	return s.Executor.Exec(ctx, c)
}

// stagingEnv is a sessionEnv over a backend that can say whether it
// stages (sandbox.StageReporter); a sessionEnv over one that cannot
// claims nothing, so run_bash watches its commands.
type stagingEnv struct{ sessionEnv }

// StageErr passes on the backend's reason for not staging.
func (s stagingEnv) StageErr() error {
	return s.Executor.(sandbox.StageReporter).StageErr()
}

// withSessionEnv wraps ex in a sessionEnv, a stagingEnv when ex reports
// on its staging.
func withSessionEnv(s sessionEnv) sandbox.Executor {
	if _, ok := s.Executor.(sandbox.StageReporter); ok {
		return stagingEnv{s}
	}
	return s
}

// childInside returns what a backend's commands' environment is built
// from: nothing of rein's environment for a container, placed as the
// container has it (the host's PATH and HOME mean nothing there), else
// rein's environment, run on the host (landlock then moves HOME and TMPDIR
// into its private temp dir).
func childInside(backend string, environ []string) ([]string, sandbox.Inside) {
	if strings.HasPrefix(backend, SandboxDocker) || backend == "podman" {
		return nil, docker.Inside()
	}
	if !hasVar(environ, "HOME") {
		if h, err := os.UserHomeDir(); err == nil {
			environ = append(environ[:len(environ):len(environ)], "HOME="+h)
		}
	}
	return environ, sandbox.Inside{}
}

func hasVar(environ []string, name string) bool {
	for _, kv := range environ {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}
