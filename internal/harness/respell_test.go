package harness_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/secret"
)

// A command re-spells an exported secret it finds in a file (rev, base64,
// xxd -p, sed 's/./&_/g'): what the model is shown and what the audit log
// keeps say [REDACTED:NAME], not the re-spelled value. read_file asks
// before it shows the file, and with the human's no shows nothing of it.
func TestRespelledSecretsStayOutOfSight(t *testing.T) {
	t.Parallel()
	const value = "zq7F3a9c1e-planted-4b2dXy"
	work := t.TempDir()
	content := "SERVICE_URL=https://svc.example\nSERVICE_API_KEY=" + value + "\n"
	if err := os.WriteFile(filepath.Join(work, "service.conf"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	commands := []string{"rev service.conf", "base64 service.conf", "xxd -p service.conf", "sed 's/./&_/g' service.conf"}
	var calls []string
	var outputs []string
	for _, c := range commands {
		prog := strings.Fields(c)[0]
		if _, err := exec.LookPath(prog); err != nil {
			t.Logf("%s not installed: skipped", prog)
			continue
		}
		cmd := exec.CommandContext(t.Context(), "sh", "-c", c)
		cmd.Dir = work
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		outputs = append(outputs, string(out))
		calls = append(calls, fmt.Sprintf(`{"text":"","calls":[{"tool":"run_bash","args":{"command":%q}}]}`, c))
	}
	calls = append(calls, `{"text":"","calls":[{"tool":"read_file","args":{"path":"service.conf"}}]}`)
	m := &recording{Model: model(t, `{"turns":[`+strings.Join(calls, ",")+`,{"text":"done"}]}`)}
	// The human lets the commands run and says no to reading the file.
	rec := &approve.Recorder{Next: approve.Func(func(_ context.Context, req approve.Request) (bool, error) {
		return req.Tool == "run_bash", nil
	})}
	out, err := harness.Run(t.Context(), harness.Spec{
		Task: "Check the service config.", Model: m, WorkDir: work, NoRollback: true, AuditDir: t.TempDir(),
		Policy:  harness.Policy{Allowed: []string{"read_file", "run_bash"}, Mode: permission.AcceptEdits, Approver: rec},
		Sandbox: harness.Sandbox{Backend: harness.SandboxNone},
		Redact:  secret.NewRedactor([]string{"SERVICE_API_KEY=" + value}).Redact,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != "done" {
		t.Fatalf("stop %s: %v", out.Stop, out.Err)
	}
	log, err := os.ReadFile(out.Audit)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(m.reqs, "\n")
	r := secret.NewRedactor([]string{"SERVICE_API_KEY=" + value})
	unsep := strings.Join(strings.Split(value, ""), "_")
	for what, text := range map[string]string{"a model request": all, "the audit log": string(log)} {
		text = strings.ReplaceAll(text, `\n`, "\n")
		for _, sp := range []string{value, rev(value), hex.EncodeToString([]byte(value)), unsep} {
			if strings.Contains(text, sp) {
				t.Errorf("%s holds %q", what, sp)
			}
		}
		// Every line of a command's output that redaction had to change
		// is absent; the rest of it is there.
		for i, o := range outputs {
			red := r.Redact(o)
			for _, line := range strings.Split(o, "\n") {
				if !strings.Contains(red, line) && strings.Contains(text, line) {
					t.Errorf("%s holds the line %q of %s", what, line, commands[i])
				}
			}
		}
		if _, found := r.Find(text); found {
			t.Errorf("a spelling of the secret reached %s", what)
		}
		if n := strings.Count(text, "[REDACTED:SERVICE_API_KEY]"); n < len(outputs) {
			t.Errorf("%s has %d redactions, want at least %d", what, n, len(outputs))
		}
	}
	if reqs := rec.Requests(); len(reqs) == 0 || !strings.Contains(reqs[len(reqs)-1].Reason, "holds a secret (SERVICE_API_KEY)") {
		t.Errorf("read_file asked %+v", reqs)
	}
	if strings.Contains(all, "SERVICE_URL=https") {
		t.Errorf("the file's other lines reached the model through read_file")
	}
}

func rev(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
