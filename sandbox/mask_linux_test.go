//go:build linux

package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// Credential files in the work dir are masked inside the sandbox: every way
// of reading one (cat, base64, a copy, a symlink to it) shows nothing of the
// secret, and writing it fails; ordinary files read as ever. The control:
// unsandboxed, the same script prints the secret.
func TestLandlockMasksCredentialFiles(t *testing.T) {
	needLandlock(t)
	const secret = "sk-live-1f2e3d4c5b6a"
	const script = `cat .env; base64 .env; cp .env x && cat x; rev .env
cat sub/.aws/credentials; cat deploy/key.pem; cat link.env; cat app.env.local 2>&1
cat .npmrc sub/.yarnrc.yml 2>&1
echo overwrite > .env 2>/dev/null && echo WROTE
cat README.md`
	plant := func(t *testing.T, work string) {
		t.Helper()
		for p, body := range map[string]string{
			".env":                 "TOKEN=" + secret + "\n",
			"sub/.aws/credentials": "aws_secret_access_key=" + secret + "\n",
			"deploy/key.pem":       "-----BEGIN PRIVATE KEY-----\n" + secret + "\n",
			"notes/target.txt":     "TOKEN=" + secret + "\n",
			"README.md":            "# readme\n",
			// Both protected and credentials: masked, not just read-only.
			".npmrc":          "//registry.example/:_authToken=" + secret + "\n",
			"sub/.yarnrc.yml": "npmAuthToken: " + secret + "\n",
		} {
			p = filepath.Join(work, p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("notes/target.txt", filepath.Join(work, "link.env")); err != nil {
			t.Fatal(err)
		}
	}
	for _, per := range []bool{false, true} {
		name := "zygote"
		if per {
			name = "per-command"
		}
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			plant(t, work)
			l := &sandbox.Landlock{WorkDir: work, PerCommand: per}
			t.Cleanup(func() { l.Close() })
			res, err := l.Exec(t.Context(), sandbox.Cmd{Script: script, Dir: work, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			out := res.Stdout + res.Stderr
			if strings.Contains(out, secret) || strings.Contains(out, "c2stbGl2ZS") || strings.Contains(out, "WROTE") {
				t.Errorf("a credential reached the command's output:\n%s", out)
			}
			if !strings.Contains(res.Stdout, "# readme") {
				t.Errorf("README.md unreadable: %q", res.Stdout)
			}
			if b, _ := os.ReadFile(filepath.Join(work, ".env")); !strings.Contains(string(b), secret) {
				t.Errorf("the masked file changed on disk: %q", b)
			}
		})
	}
	work := t.TempDir()
	plant(t, work)
	res, err := (&sandbox.Local{}).Exec(t.Context(), sandbox.Cmd{Script: script, Dir: work, Timeout: time.Minute})
	if err != nil || !strings.Contains(res.Stdout, secret) {
		t.Errorf("control: %v, %q; unsandboxed the secret is not there, so the test shows nothing", err, res.Stdout)
	}
}
