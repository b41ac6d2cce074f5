//go:build linux

package sandbox_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// plantSecrets puts into rein's environment what no command may see; the
// exact comparisons below fail if any of it reaches the command.
func plantSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-planted")
	t.Setenv("REIN_PLANTED_SECRET", "planted")
	t.Setenv("LD_PRELOAD", "")
	t.Setenv("BASH_ENV", "/nonexistent")
}

// seenEnv runs env through ex and returns what the command saw, without
// what the shell sets itself.
func seenEnv(t *testing.T, ex sandbox.Executor, dir string) []string {
	t.Helper()
	res, err := ex.Exec(t.Context(), sandbox.Cmd{Script: "exec env", Dir: dir, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("env: exit %d: %s", res.ExitCode, res.Stderr)
	}
	var out []string
	for _, kv := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PWD", "SHLVL", "_", "OLDPWD":
		default:
			out = append(out, kv)
		}
	}
	slices.Sort(out)
	return out
}

// TestLocalSeesChildEnv: a Local command whose caller set no environment
// sees exactly ChildEnv of rein's environment.
func TestLocalSeesChildEnv(t *testing.T) { // not parallel: t.Setenv
	plantSecrets(t)
	got := seenEnv(t, &sandbox.Local{}, t.TempDir())
	if want := sandbox.MinimalEnv(); !slices.Equal(got, want) {
		t.Fatalf("the command saw\n %q\nwant ChildEnv's\n %q", got, want)
	}
}

// TestLandlockSeesChildEnv: a landlock command sees exactly ChildEnv of
// rein's environment with HOME, TMPDIR and the caches in the sandbox's
// private temp dir.
func TestLandlockSeesChildEnv(t *testing.T) { // not parallel: t.Setenv
	plantSecrets(t)
	l, work := newLandlock(t, &sandbox.Landlock{})
	got := seenEnv(t, l, work)
	var tmp string
	for _, kv := range got {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmp = v
		}
	}
	if tmp == "" || !filepath.IsAbs(tmp) {
		t.Fatalf("no TMPDIR in %q", got)
	}
	want := sandbox.ChildEnv(sandbox.MinimalEnv(), sandbox.Inside{Home: filepath.Join(tmp, "home"), TmpDir: tmp, Caches: true})
	if !slices.Equal(got, want) {
		t.Fatalf("the command saw\n %q\nwant\n %q", got, want)
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "HOME="+tmp+"/") {
			t.Errorf("HOME is not private: %s", kv)
		}
	}
}
