package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/reinhq/rein/internal/testenv"
)

// openPTY opens a pseudo-terminal: what is written to master is what a
// human types at the terminal slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	testenv.Need(t, "pty", err)
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	testenv.Need(t, "pty", err)
	t.Cleanup(func() { s.Close() })
	return m, s
}

// rein run on a terminal asks about send_email: the prompt shows the whole
// call; "y" sends, anything else does not.
func TestRunAsksOnTheTerminal(t *testing.T) {
	for _, c := range []struct {
		typed  string
		outbox string
	}{
		{"y\n", `"outbox":1`},
		{"\n", `"outbox":0`},
		{"sure\n", `"outbox":0`},
	} {
		t.Run(strings.TrimSpace(c.typed), func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
			script := filepath.Join(dir, "mail.json")
			writeFile(t, script, `{"turns":[
			 {"text":"sending","calls":[{"tool":"send_email","args":{"to":"ann@example.com","subject":"Summary","body":"All done."}}]},
			 {"text":"finished"}]}`)
			master, slave := openPTY(t)
			if _, err := master.WriteString(c.typed); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := run(t.Context(), []string{"run", "--model", "scripted:" + script, "--tools", "send_email", "--workdir", workIn(t, dir),
				"--audit-dir", filepath.Join(dir, "audit"), "--json", "Send Ann the summary."},
				env{stdin: slave, stdout: &out, stderr: &errOut})
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
			}
			for _, want := range []string{"approval needed", "tool:   send_email", "gate:   confirm", `to: "ann@example.com"`, `body: "All done."`, "[y/N]"} {
				if !strings.Contains(errOut.String(), want) {
					t.Errorf("the prompt lacks %q:\n%s", want, errOut.String())
				}
			}
			if !strings.Contains(out.String(), c.outbox) {
				t.Errorf("typed %q: want %s in\n%s", c.typed, c.outbox, out.String())
			}
		})
	}
}
