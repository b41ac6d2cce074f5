package docker

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reinhq/rein/sandbox"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestCheckWorkDir(t *testing.T) {
	t.Parallel()
	root := tempDir(t)
	home := filepath.Join(root, "home", "alice")
	for _, d := range []string{"home/alice/.ssh/keys", "home/alice/.config/gcloud", "home/alice/proj/sub", "plain"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(root, "to-ssh")))
	must(os.Symlink(filepath.Join(home, "proj"), filepath.Join(root, "to-proj")))
	must(os.Symlink("/etc", filepath.Join(root, "to-etc")))
	must(os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	must(os.Mkdir(filepath.Join(root, "a,b"), 0o755))

	for _, c := range []struct {
		dir  string
		src  string // "" when refused
		want string // part of the error
	}{
		{filepath.Join(home, "proj"), filepath.Join(home, "proj"), ""},
		{filepath.Join(home, "proj", "sub"), filepath.Join(home, "proj", "sub"), ""},
		{filepath.Join(root, "plain"), filepath.Join(root, "plain"), ""},
		{filepath.Join(root, "to-proj"), filepath.Join(home, "proj"), ""},
		{home, "", "home directory"},
		{filepath.Join(root, "home"), "", "home directory"},
		{filepath.Join(home, ".ssh"), "", "credential directory"},
		{filepath.Join(home, ".ssh", "keys"), "", "credential directory"},
		{filepath.Join(home, ".config", "gcloud"), "", "credential directory"},
		{filepath.Join(root, "to-ssh"), "", "credential directory"},
		{filepath.Join(root, "to-etc"), "", "system directory /etc"},
		{"/", "", "whole file system"},
		{"/etc", "", "system directory /etc"},
		{"/run", "", "system directory /run"},
		{"/var", "", "system directory /var/run"},
		{"/home", "", "home directories"},
		{"relative/dir", "", "not an absolute path"},
		{root + "/plain/", "", "not a clean path"},
		{root + "/plain/../plain", "", "not a clean path"},
		{filepath.Join(root, "missing"), "", "no such file"},
		{filepath.Join(root, "file"), "", "not a directory"},
		{filepath.Join(root, "a,b"), "", "comma"},
	} {
		src, err := checkWorkDir(c.dir, home)
		if c.want == "" {
			if err != nil || src != c.src {
				t.Errorf("checkWorkDir(%q) = %q, %v; want %q", c.dir, src, err, c.src)
			}
			continue
		}
		if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("checkWorkDir(%q) = %q, %v; want ErrInvalid about %q", c.dir, src, err, c.want)
		}
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{"defaults", Options{Image: "img"}, true},
		{"bridge network", Options{Image: "img", Network: "bridge"}, true},
		{"no image", Options{}, false},
		{"image like a flag", Options{Image: "--privileged"}, false},
		{"host network", Options{Image: "img", Network: "host"}, false},
		{"another container's network", Options{Image: "img", Network: "container:abc"}, false},
		{"negative pids", Options{Image: "img", PidsLimit: -1}, false},
		{"negative output", Options{Image: "img", MaxOutput: -1}, false},
		{"memory with a comma", Options{Image: "img", Memory: "1g,rw"}, false},
		{"tmp size smuggling options", Options{Image: "img", TmpSize: "1g,exec"}, false},
		{"session with a newline", Options{Image: "img", Session: "a\nb"}, false},
		{"env without =", Options{Image: "img", Env: []string{"ANTHROPIC_API_KEY"}}, false},
		{"env with empty name", Options{Image: "img", Env: []string{"=x"}}, false},
		{"empty env", Options{Image: "img", Env: []string{}}, true},
	} {
		got, err := c.o.withDefaults()
		if c.ok != (err == nil) {
			t.Errorf("%s: withDefaults() error = %v, want ok %v", c.name, err, c.ok)
		}
		if !c.ok && !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("%s: error %v does not wrap ErrInvalid", c.name, err)
		}
		if c.ok && (got.Runtime == "" || got.Network == "" || got.PidsLimit == 0 || got.Memory == "" || got.Session == "" || got.Env == nil) {
			t.Errorf("%s: defaults not filled: %+v", c.name, got)
		}
	}
}

// TestRunArgs pins every flag of `docker run` in a golden file: each is a
// part of the isolation, and a change must be seen in review.
func TestRunArgs(t *testing.T) {
	t.Parallel()
	o, err := Options{Image: "rein-test-busybox:latest", WorkDir: "/work/dir", Session: "s-1"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	own := owner{pid: 4242, host: "box", boot: "b00t", start: "1234"}
	var b strings.Builder
	for _, rootless := range []bool{false, true} {
		b.WriteString(strings.Join(runArgs(o, "--mount=type=bind,source=/host/dir,target=/work/dir", "rein-name", own, rootless, nil), "\n"))
		b.WriteString("\n\n")
	}
	got := b.String()
	golden := filepath.Join("testdata", "run-args.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("run args changed (go test -update to accept):\n%s", got)
	}
}

func TestClientEnv(t *testing.T) {
	t.Parallel()
	got := clientEnv([]string{"PATH=/bin", "HOME=/h", "ANTHROPIC_API_KEY=sk-secret", "DOCKER_HOST=unix:///x",
		"AWS_SECRET_ACCESS_KEY=s", "XDG_RUNTIME_DIR=/run/user/1", "GITHUB_TOKEN=t", "CONTAINER_HOST=ssh://h"})
	want := "PATH=/bin HOME=/h DOCKER_HOST=unix:///x XDG_RUNTIME_DIR=/run/user/1 CONTAINER_HOST=ssh://h"
	if strings.Join(got, " ") != want {
		t.Errorf("clientEnv = %q, want %q", got, want)
	}
}

func TestOwnerAlive(t *testing.T) {
	t.Parallel()
	self := currentOwner()
	if self.boot == "" {
		t.Skip("no /proc boot id here")
	}
	label := func(pid, boot, start, host string) map[string]string {
		return map[string]string{LabelSession: "s", LabelPID: pid, LabelBoot: boot, LabelStart: start, LabelHost: host}
	}
	pid := strconv.Itoa
	for _, c := range []struct {
		name   string
		labels map[string]string
		alive  bool
	}{
		{"this process", label(pid(self.pid), self.boot, self.start, self.host), true},
		{"pid reused", label(pid(self.pid), self.boot, "1", self.host), false},
		{"rebooted since", label(pid(self.pid), "other-boot", self.start, self.host), false},
		{"no such process", label("999999999", self.boot, "1", self.host), false},
		{"another machine", label("999999999", "other-boot", "1", "elsewhere"), true},
		{"no pid label", label("", self.boot, "1", self.host), true},
		{"bad pid label", label("-3", self.boot, "1", self.host), true},
		{"no start label", label("999999999", self.boot, "", self.host), true},
	} {
		if got := self.alive(c.labels); got != c.alive {
			t.Errorf("%s: alive(%v) = %v, want %v", c.name, c.labels, got, c.alive)
		}
	}
}
