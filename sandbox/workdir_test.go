package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/sandbox/docker"
)

// workTree is a temporary tree with a home that holds credential stores
// and a project, and links into both.
func workTree(t *testing.T) (root, home string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(root, "home", "alice")
	for _, d := range []string{"home/alice/.ssh/keys", "home/alice/.aws", "home/alice/.config/gcloud/x",
		"home/alice/.config/rein", "home/alice/.gnupg/private", "home/alice/proj/sub", "home/bob", "plain"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"to-keys": filepath.Join(home, ".ssh", "keys"), "to-proj": filepath.Join(home, "proj")} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, home
}

// One work-dir check for every backend: the same dirs are refused, each
// with an error naming --workdir as the fix.
func TestCheckWorkDir(t *testing.T) {
	t.Parallel()
	root, home := workTree(t)
	for _, c := range []struct {
		dir  string
		src  string // "" when refused
		want string
	}{
		{filepath.Join(home, "proj"), filepath.Join(home, "proj"), ""},
		{filepath.Join(home, "proj", "sub"), filepath.Join(home, "proj", "sub"), ""},
		{filepath.Join(root, "to-proj"), filepath.Join(home, "proj"), ""},
		{filepath.Join(root, "plain"), filepath.Join(root, "plain"), ""},
		{filepath.Join(root, "home", "bob"), filepath.Join(root, "home", "bob"), ""}, // another user's home is not this one's credentials
		{filepath.Join(home, ".ssh", "keys"), "", "credential directory"},            // inside a credential store
		{filepath.Join(home, ".ssh"), "", "credential directory"},
		{filepath.Join(root, "to-keys"), "", "credential directory"}, // through a link
		{filepath.Join(home, ".gnupg", "private"), "", "credential directory"},
		{filepath.Join(home, ".config", "gcloud", "x"), "", "credential directory"},
		{filepath.Join(home, ".config", "rein"), "", "credential directory"},
		{filepath.Join(home, ".config"), "", "credential directory"}, // holds one
		{home, "", "home directory"},
		{filepath.Join(root, "home"), "", "home directory"},
		{"/", "", "whole file system"},
		{"/etc", "", "system directory /etc"},
		{"/usr/local", "", "system directory /usr"},
		{"rel/dir", "", "not an absolute path"},
		{filepath.Join(root, "plain") + "/", "", "not a clean path"},
		{filepath.Join(root, "missing"), "", "no such file"},
	} {
		src, err := sandbox.CheckWorkDir(c.dir, home)
		if c.want == "" {
			if err != nil || src != c.src {
				t.Errorf("CheckWorkDir(%q) = %q, %v; want %q", c.dir, src, err, c.src)
			}
			continue
		}
		if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--workdir") {
			t.Errorf("CheckWorkDir(%q) = %q, %v; want ErrInvalid about %q naming --workdir", c.dir, src, err, c.want)
		}
	}
	// Without a home, what does not depend on it is still refused.
	if _, err := sandbox.CheckWorkDir("/", ""); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("CheckWorkDir(/, no home) = %v", err)
	}
	if _, err := sandbox.CheckWorkDir(filepath.Join(home, "proj"), ""); err != nil {
		t.Errorf("CheckWorkDir(project, no home) = %v", err)
	}
}

// Both backends refuse a work dir inside a credential store, before
// anything starts, with the same error: Landlock used to accept one.
func TestBackendsRefuseWorkDirInCredentialStore(t *testing.T) {
	_, home := workTree(t)
	t.Setenv("HOME", home)
	keys := filepath.Join(home, ".ssh", "keys")
	proj := filepath.Join(home, "proj")

	t.Run("docker", func(t *testing.T) {
		_, err := docker.Start(t.Context(), docker.Options{Image: "rein-no-such-image:never", WorkDir: keys, Session: "s1"})
		if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "credential directory") || !strings.Contains(err.Error(), "--workdir") {
			t.Errorf("docker.Start in %s = %v, want ErrInvalid naming the credential directory and --workdir", keys, err)
		}
	})
	t.Run("landlock", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("landlock is Linux only")
		}
		_, err := sandbox.LandlockStatus()
		testenv.Need(t, "landlock", err)
		l := &sandbox.Landlock{WorkDir: keys}
		defer l.Close()
		_, err = l.Exec(t.Context(), sandbox.Cmd{Script: "touch ran", Dir: keys})
		if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "credential directory") || !strings.Contains(err.Error(), "--workdir") {
			t.Errorf("landlock Exec in %s = %v, want ErrInvalid naming the credential directory and --workdir", keys, err)
		}
		if _, err := os.Stat(filepath.Join(keys, "ran")); err == nil {
			t.Error("the command ran")
		}
		// The project next to it still works.
		ok := &sandbox.Landlock{WorkDir: proj}
		defer ok.Close()
		res, err := ok.Exec(t.Context(), sandbox.Cmd{Script: "touch ran", Dir: proj})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("landlock Exec in %s = %+v, %v", proj, res, err)
		}
	})
}
