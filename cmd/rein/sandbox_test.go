package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
)

func needLandlock(t *testing.T) {
	t.Helper()
	_, err := sandbox.LandlockStatus()
	testenv.Need(t, "landlock", err)
}

// rein sandbox exec runs one command the way run_bash would: the exit code
// passes through, the work dir is writable, the rest of the machine is not.
func TestSandboxExec(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	writeFile(t, outside, "secret\n")
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"exit code passes through", []string{"sh", "-c", "exit 3"}, 3, ""},
		{"ordinary work", []string{"sh", "-c", "printf 'b\\na\\n' | sort | head -1 && echo hi > in.txt && cat in.txt"}, 0, "a\nhi\n"},
		{"read outside", []string{"cat", outside}, 1, ""},
		{"/etc/shadow", []string{"cat", "/etc/shadow"}, 1, ""},
		{"write outside", []string{"sh", "-c", "echo x > " + outside + ".new"}, 2, ""},
		{"network", []string{"sh", "-c", "exec 3<>/dev/tcp/127.0.0.1/22"}, 1, ""},
	} {
		code, stdout, stderr := runRein(t, "", append([]string{"sandbox", "exec", "--backend", "landlock", "--workdir", work, "--"}, c.args...)...)
		if (c.code == 0) != (code == 0) || (c.code == 3 && code != 3) || !strings.HasPrefix(stdout, c.stdout) {
			t.Errorf("%s: exit %d stdout %q stderr %q, want exit %d", c.name, code, stdout, stderr, c.code)
		}
	}
	if _, err := os.Stat(outside + ".new"); err == nil {
		t.Fatal("the sandboxed command wrote outside the work dir")
	}
	if code, _, stderr := runRein(t, "", "sandbox", "exec", "--backend", "landlock", "--workdir", work); code != exitUsage || !strings.Contains(stderr, "command") {
		t.Fatalf("no command: exit %d %s", code, stderr)
	}
}

func TestSandboxDoctor(t *testing.T) {
	needLandlock(t)
	code, stdout, _ := runRein(t, "", "sandbox", "doctor")
	if code != 0 || !strings.Contains(stdout, "landlock  yes  Landlock ABI") || !strings.Contains(stdout, "none      yes  only when asked for") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	want := "network   no   "
	if os.Geteuid() == 0 {
		want = "network   yes  "
	}
	if !strings.Contains(stdout, want) {
		t.Fatalf("doctor does not say %q of the egress proxy:\n%s", want, stdout)
	}
	// What the docker backend supports, when its daemon answers.
	if strings.Contains(stdout, "docker    yes") {
		for _, line := range []string{"  staging ", "  network "} {
			yes := line + "yes  "
			if os.Geteuid() != 0 {
				yes = line + "no   "
			}
			if !strings.Contains(stdout, yes) {
				t.Errorf("doctor does not say %q of the docker backend:\n%s", yes, stdout)
			}
		}
	}
}

// run says loudly when commands run unsandboxed, and the log records which
// sandbox commands ran in.
func TestRunRecordsTheSandbox(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[{"text":"x","calls":[{"tool":"run_bash","args":{"command":"echo ok"}}]},{"text":"done"}]}`)
	for _, c := range []struct {
		backend, want string
		warn          bool
	}{{"none", `"sandbox":"none"`, true}, {"auto", `"sandbox":"landlock"`, false}, {"landlock", `"sandbox":"landlock"`, false}} {
		audit := filepath.Join(dir, "audit-"+c.backend)
		code, _, stderr := runRein(t, "", "run", "--model", "scripted:"+script, "--workdir", workIn(t, dir), "--mode", "bypass", "--tools", "run_bash",
			"--sandbox", c.backend, "--audit-dir", audit, "Say ok.")
		if code != 0 || strings.Contains(stderr, "UNSANDBOXED") != c.warn {
			t.Fatalf("%s: exit %d, stderr %q", c.backend, code, stderr)
		}
		logs, _ := filepath.Glob(filepath.Join(audit, "*.jsonl"))
		data, _ := os.ReadFile(logs[0])
		if !strings.Contains(string(data), c.want) || !strings.Contains(string(data), `exit code: 0`) {
			t.Fatalf("%s: the log lacks %s or the command's result:\n%s", c.backend, c.want, data)
		}
	}
}
