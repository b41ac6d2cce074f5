package sandbox_test

import (
	"slices"
	"testing"

	"github.com/reinhq/rein/sandbox"
)

// TestChildEnv: what the one builder of a child's environment keeps and
// drops, for each backend's placement.
func TestChildEnv(t *testing.T) {
	t.Parallel()
	host := []string{"PATH=/hbin", "HOME=/h", "USER=u", "LANG=de_DE.UTF-8", "LC_ALL=C", "TERM=xterm", "TMPDIR=/htmp",
		"OPENAI_API_KEY=sk-x", "GITHUB_TOKEN=ghp", "AWS_SECRET_ACCESS_KEY=s", "LD_PRELOAD=/evil.so", "BASH_ENV=/x",
		"ENV=/x", "PYTHONPATH=/x", "GIT_CONFIG_GLOBAL=/x", "SSH_AUTH_SOCK=/a", "REIN_SESSION=forged", "NO_EQUALS"}
	for _, c := range []struct {
		name string
		host []string
		in   sandbox.Inside
		want []string
	}{
		{"host", host, sandbox.Inside{},
			[]string{"HOME=/h", "LANG=de_DE.UTF-8", "LC_ALL=C", "PATH=/hbin", "TERM=dumb", "TMPDIR=/htmp", "USER=u"}},
		{"session", host, sandbox.Inside{Session: "s1", Token: "tok"},
			[]string{"HOME=/h", "LANG=de_DE.UTF-8", "LC_ALL=C", "PATH=/hbin", "REIN_SESSION=s1", "REIN_SESSION_TOKEN=tok",
				"TERM=dumb", "TMPDIR=/htmp", "USER=u"}},
		{"sandbox places home, temp and caches", host, sandbox.Inside{Home: "/p/home", TmpDir: "/p", Caches: true},
			[]string{"GOCACHE=/p/cache/go-build", "GOPATH=/p/go", "HOME=/p/home", "LANG=de_DE.UTF-8", "LC_ALL=C",
				"PATH=/hbin", "TERM=dumb", "TMPDIR=/p", "USER=u", "XDG_CACHE_HOME=/p/cache"}},
		{"container: nothing of the host", nil, sandbox.Inside{Home: "/tmp", TmpDir: "/tmp", Path: "/bin"},
			[]string{"HOME=/tmp", "LANG=C.UTF-8", "PATH=/bin", "TERM=dumb", "TMPDIR=/tmp"}},
		{"empty host: defaults", nil, sandbox.Inside{},
			[]string{"HOME=/", "LANG=C.UTF-8", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				"TERM=dumb", "TMPDIR=/tmp"}},
		{"LOGNAME stands for USER; the last value wins", []string{"LOGNAME=l", "HOME=/a", "HOME=/b"}, sandbox.Inside{},
			[]string{"HOME=/b", "LANG=C.UTF-8", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				"TERM=dumb", "TMPDIR=/tmp", "USER=l"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := sandbox.ChildEnv(c.host, c.in); !slices.Equal(got, c.want) {
				t.Errorf("ChildEnv =\n %q\nwant\n %q", got, c.want)
			}
		})
	}
}
