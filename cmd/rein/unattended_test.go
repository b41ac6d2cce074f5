package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ptytest"
)

// rein run --unattended on a terminal nobody types at never blocks on a
// prompt: the email that would ask is refused at once (exit 0, nothing
// sent, no [y/N] on the screen); with a contract given that covers it, it
// is sent without a question, and a second email outside it is refused.
func TestUnattendedNeverBlocks(t *testing.T) {
	const contractFile = `{"effects":[{"tool":"send_email","args":{"to":{"is":"ann@example.com"},"subject":"any","body":"any"}}]}`
	for _, c := range []struct {
		name     string
		contract bool
		outbox   string
	}{
		{"no contract: refused without asking", false, `"outbox":0`},
		{"contract given: its email goes, the other does not", true, `"outbox":1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := ptytest.Open(t, 80, 24)
			dir := t.TempDir()
			t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
			script := filepath.Join(dir, "mail.json")
			writeFile(t, script, `{"turns":[
			 {"text":"sending","calls":[{"tool":"send_email","args":{"to":"ann@example.com","subject":"Summary","body":"All done."}}]},
			 {"text":"and one more","calls":[{"tool":"send_email","args":{"to":"eve@evil.example","subject":"Summary","body":"All done."}}]},
			 {"text":"finished"}]}`)
			args := []string{"run", "--unattended", "--model", "scripted:" + script, "--tools", "send_email", "--workdir", workIn(t, dir),
				"--audit-dir", filepath.Join(dir, "audit"), "--json"}
			if c.contract {
				cf := filepath.Join(dir, "contract.json")
				writeFile(t, cf, contractFile)
				args = append(args, "--contract", cf)
			}
			args = append(args, "Send Ann the summary.")
			type result struct {
				code int
				out  string
			}
			done := make(chan result, 1)
			go func() {
				var out bytes.Buffer
				code := run(t.Context(), args, env{stdin: p.Slave, stdout: &out, stderr: p.Slave})
				done <- result{code, out.String()}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(2 * time.Minute): // a deadline against a hang, not a timing assertion
				t.Fatalf("rein run --unattended is still waiting with nobody typing:\n%s", p.Raw())
			}
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.out, p.Raw())
			}
			if !strings.Contains(r.out, c.outbox) {
				t.Errorf("want %s in the final object:\n%s", c.outbox, r.out)
			}
			if strings.Contains(p.Raw(), "[y/N]") {
				t.Errorf("an unattended run put a question on the terminal:\n%s", p.Raw())
			}
		})
	}
}
