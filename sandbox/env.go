package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// Inside says how a backend's commands see their environment: where HOME,
// TMPDIR and PATH are inside the sandbox, and the session they belong to.
// The zero value is a command run on the host (Local): the host's HOME and
// PATH, the host's TMPDIR.
type Inside struct {
	Home   string // HOME as the command sees it; "" the host's HOME, else "/"
	TmpDir string // TMPDIR; "" the host's TMPDIR, else "/tmp"
	Path   string // PATH; "" the host's PATH, else a standard one
	// Caches points GOCACHE, GOPATH and XDG_CACHE_HOME into TmpDir unless
	// the environment sets them, so that caches do not land in the work dir
	// or in a home the command cannot write.
	Caches bool
	// Session and Token are REIN_SESSION and REIN_SESSION_TOKEN, when set.
	Session, Token string
}

// ChildEnv returns the complete environment of a command whose caller did
// not choose one, built from host (rein's environment, os.Environ() form)
// as in says. It is the one builder of a child's environment: every backend
// uses it (Local and Landlock through MinimalEnv and forInside, docker
// through DefaultEnv) and so does a session (internal/harness).
//
// Of host it keeps only HOME, PATH, USER (LOGNAME when USER is unset),
// LANG and LC_ALL, where in does not set them; it sets TERM=dumb (output is
// captured, never a terminal), LANG=C.UTF-8 when host has none, TMPDIR,
// the caches when in.Caches, and REIN_SESSION and REIN_SESSION_TOKEN when
// in names a session. Everything else, API keys and tokens among it, and
// variables that change how programs load (LD_PRELOAD, BASH_ENV, ...), is
// dropped. The result is sorted by name.
func ChildEnv(host []string, in Inside) []string {
	get := func(name string) string {
		v := ""
		for _, kv := range host {
			if k, val, ok := strings.Cut(kv, "="); ok && k == name {
				v = val // the last one wins, as for getenv
			}
		}
		return v
	}
	or := func(vs ...string) string {
		for _, v := range vs {
			if v != "" {
				return v
			}
		}
		return ""
	}
	env := []string{
		"HOME=" + or(in.Home, get("HOME"), "/"),
		"LANG=" + or(get("LANG"), "C.UTF-8"),
		"PATH=" + or(in.Path, get("PATH"), defaultPath),
		"TERM=dumb",
		"TMPDIR=" + or(in.TmpDir, get("TMPDIR"), "/tmp"),
	}
	if v := get("LC_ALL"); v != "" {
		env = append(env, "LC_ALL="+v)
	}
	if v := or(get("USER"), get("LOGNAME")); v != "" {
		env = append(env, "USER="+v)
	}
	if in.Session != "" {
		env = append(env, "REIN_SESSION="+in.Session)
	}
	if in.Token != "" {
		env = append(env, "REIN_SESSION_TOKEN="+in.Token)
	}
	if in.Caches {
		env = in.caches(env)
	}
	slices.Sort(env)
	return env
}

// forInside returns env, a command's complete environment chosen by its
// caller, as the command sees it inside: HOME and TMPDIR forced to in's
// (the host's make no sense there), the caches defaulted when in.Caches.
// Everything else of env is kept, in order.
func (in Inside) forInside(env []string) []string {
	force := map[string]string{}
	if in.Home != "" {
		force["HOME"] = in.Home
	}
	if in.TmpDir != "" {
		force["TMPDIR"] = in.TmpDir
	}
	out := make([]string, 0, len(env)+len(force)+3)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := force[k]; ok {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range []string{"HOME", "TMPDIR"} {
		if v, ok := force[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	if in.Caches {
		out = in.caches(out)
	}
	return out
}

// caches appends to env GOCACHE, GOPATH and XDG_CACHE_HOME under
// in.TmpDir, each unless env sets it.
func (in Inside) caches(env []string) []string {
	if in.TmpDir == "" {
		return env
	}
	for _, d := range []struct{ k, v string }{
		{"GOCACHE", filepath.Join(in.TmpDir, "cache", "go-build")},
		{"GOPATH", filepath.Join(in.TmpDir, "go")},
		{"XDG_CACHE_HOME", filepath.Join(in.TmpDir, "cache")},
	} {
		if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, d.k+"=") }) {
			env = append(env, d.k+"="+d.v)
		}
	}
	return env
}

// landlockInside is how a landlock command sees its environment: HOME and
// TMPDIR in the executor's private temp dir tmp, and the caches there.
func landlockInside(tmp string) Inside {
	return Inside{Home: filepath.Join(tmp, "home"), TmpDir: tmp, Caches: true}
}
