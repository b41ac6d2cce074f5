package harness_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	reinmodel "github.com/reinhq/rein/model"
	"github.com/reinhq/rein/secret"
)

// A command sees exactly the allowlisted variables (sandbox.ChildEnv) plus
// REIN_SESSION and REIN_SESSION_TOKEN (and what the shell sets itself); a secret planted in
// rein's environment, and any other variable, is absent. The token is the
// session's, shown to nobody in full: not to the model, not in the log,
// which keeps a masked form.
func TestChildEnvIsTheAllowlist(t *testing.T) {
	const planted = "pl4nted-db-password-7c1e9a"
	t.Setenv("PLANTED_DB_PASSWORD", planted)
	t.Setenv("PLANTED_PLAIN", "plain-but-not-allowed")
	t.Setenv("LD_PRELOAD", "/tmp/evil.so")
	for k, v := range map[string]string{"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm", "USER": "tester"} {
		t.Setenv(k, v)
	}
	work := t.TempDir()
	m := &recording{Model: model(t, `{"turns":[
	 {"text":"env","calls":[{"tool":"run_bash","args":{"command":"env; printenv REIN_SESSION_TOKEN > token.txt"}}]},
	 {"text":"done"}]}`)}
	out, err := harness.Run(t.Context(), harness.Spec{
		Task: "Show the environment.", Model: m, WorkDir: work, NoRollback: true,
		Policy:  harness.Policy{Allowed: []string{"run_bash"}, Mode: permission.Bypass},
		Sandbox: harness.Sandbox{Backend: harness.SandboxNone}, AuditDir: t.TempDir(),
		Redact: secret.NewRedactor(os.Environ()).Redact,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != "done" {
		t.Fatalf("stop %s (%v)", out.Stop, out.Err)
	}
	var result string
	for _, msg := range out.Messages {
		for _, b := range msg.Blocks {
			if b.Kind == reinmodel.KindToolResult {
				result = b.Result.Content
			}
		}
	}
	names := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`).FindAllStringSubmatch(result, -1) {
		names[m[1]] = m[2]
	}
	var got []string
	for n := range names {
		switch n {
		case "PWD", "SHLVL", "_", "OLDPWD": // set by the shell itself
		default:
			got = append(got, n)
		}
	}
	slices.Sort(got)
	want := []string{"HOME", "LANG", "LC_ALL", "PATH", "REIN_SESSION", "REIN_SESSION_TOKEN", "TERM", "TMPDIR", "USER"}
	if !slices.Equal(got, want) {
		t.Fatalf("the command's environment has %q, want exactly %q\n%s", got, want, result)
	}
	if names["REIN_SESSION"] != out.Session {
		t.Errorf("REIN_SESSION=%q, want the session id %q", names["REIN_SESSION"], out.Session)
	}
	if names["REIN_SESSION_TOKEN"] != "[REDACTED:REIN_SESSION_TOKEN]" {
		t.Errorf("the model was shown REIN_SESSION_TOKEN=%q, want it redacted", names["REIN_SESSION_TOKEN"])
	}
	raw, err := os.ReadFile(filepath.Join(work, "token.txt"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(token) {
		t.Fatalf("the command's token is %q, want 32 hex digits", token)
	}
	log, err := os.ReadFile(out.Audit)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"a model request": strings.Join(m.reqs, "\n"), "the audit log": string(log)} {
		for _, leak := range []string{token, planted, "plain-but-not-allowed", "evil.so"} {
			if strings.Contains(text, leak) {
				t.Errorf("%q reached %s", leak, what)
			}
		}
	}
	if masked := `"session_token":"` + secret.Mask(token) + `"`; !strings.Contains(string(log), masked) {
		t.Errorf("the log lacks the masked token %s", masked)
	}
}

func TestSessionTokenRotates(t *testing.T) {
	t.Parallel()
	tok, err := secret.NewSessionToken()
	if err != nil {
		t.Fatal(err)
	}
	old := tok.Value()
	if !tok.Valid(old) || tok.Valid("") || tok.Valid(old[:31]) {
		t.Fatal("Valid is wrong before rotation")
	}
	if err := tok.Rotate(); err != nil {
		t.Fatal(err)
	}
	if tok.Valid(old) || tok.Value() == old || !tok.Valid(tok.Value()) {
		t.Fatal("after Rotate the old token must be invalid and the new one valid")
	}
	if m := tok.Masked(); strings.Contains(m, tok.Value()) || !strings.HasPrefix(m, tok.Value()[:4]) {
		t.Fatalf("Masked() = %q", m)
	}
}
