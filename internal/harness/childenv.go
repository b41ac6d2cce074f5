package harness

import (
	"context"
	"os"
	"strings"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/sandbox/docker"
	"github.com/reinhq/rein/secret"
)

// sessionEnv gives every command of a session the allowlisted environment
// (secret.ChildEnv: PATH, HOME, USER, LANG, LC_ALL, TERM) plus REIN_SESSION
// and REIN_SESSION_TOKEN, whatever the backend. A command whose caller set
// its environment (Cmd.Env non-nil) keeps it.
type sessionEnv struct {
	sandbox.Executor
	base    []string // where the allowlisted variables come from
	session string
	token   *secret.SessionToken
}

// Exec runs c with the session's environment.
func (s sessionEnv) Exec(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	if c.Env == nil {
		c.Env = secret.ChildEnv(s.base, s.session, s.token.Value())
	}
	return s.Executor.Exec(ctx, c)
}

// childBase is what the allowlist picks from: the container's own defaults
// for docker (the host's PATH and HOME mean nothing there), else rein's
// environment, with PATH and HOME defaulted when rein has none.
func childBase(backend string, environ []string) []string {
	if strings.HasPrefix(backend, SandboxDocker) || backend == "podman" {
		return docker.DefaultEnv()
	}
	base := append([]string(nil), environ...)
	has := func(name string) bool {
		for _, kv := range base {
			if strings.HasPrefix(kv, name+"=") {
				return true
			}
		}
		return false
	}
	if !has("PATH") {
		base = append(base, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	if !has("HOME") {
		if h, err := os.UserHomeDir(); err == nil {
			base = append(base, "HOME="+h)
		}
	}
	return base
}
