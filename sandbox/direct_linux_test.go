//go:build linux

package sandbox_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/sandbox"
)

// directWork makes a work dir with programs and scripts of every kind a
// direct command may name.
func directWork(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	files := []struct {
		name, body string
		mode       os.FileMode
	}{
		{"hello.sh", "#!/bin/sh\necho \"$0\" \"$@\"; echo err >&2; exit 3\n", 0o755},
		{"sub/args.sh", "#!/bin/sh\nfor a; do printf '[%s]' \"$a\"; done; echo\n", 0o755},
		{"noshebang.sh", "echo run by bash as a script of its own\n", 0o755},
		{"bad.sh", "#!/nonexistent/interpreter\n", 0o755},
		{"notexec.sh", "#!/bin/sh\necho no\n", 0o644},
		{"data.txt", "some data\n", 0o644},
		// On PATH a:b, where a's file comes first whether the kernel can
		// exec it or not, as bash picks it.
		{"a/noshebang", "echo A, run by bash as a script\n", 0o755},
		{"b/noshebang", "#!/bin/sh\necho B\n", 0o755},
		{"a/empty", "", 0o755},
		{"b/empty", "#!/bin/sh\necho B\n", 0o755},
		{"a/short", "#!", 0o755},
		{"b/short", "#!/bin/sh\necho B\n", 0o755},
		{"a/notexec", "#!/bin/sh\necho A\n", 0o644},
		{"b/notexec", "#!/bin/sh\necho B\n", 0o755},
		{"b/else", "#!/bin/sh\necho else ran\n", 0o755},
		// A decoy for an absolute name: /usr/bin/env is what runs.
		{"usr/bin/env", "not this one\n", 0o644},
	}
	for _, f := range files {
		p := filepath.Join(work, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.body), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// TestDirectAsShell runs each command through an executor that execs
// simple commands directly and through one that gives every command to
// bash, in each mode of the executor: what a command prints, and how it
// ends, must be the same. The environment is compared as a set (bash
// writes it in an order of its own).
func TestDirectAsShell(t *testing.T) {
	needLandlock(t)
	scripts := []string{
		`true`, `false`, `ls`, `ls -la nonexistent`, `cat data.txt`, `'cat' "data.txt"`,
		`./hello.sh a 'b c' ""`, `sub/args.sh 'x  y' z`, `./sub/../sub/args.sh`,
		`./noshebang.sh`, `./bad.sh`, `./notexec.sh`, `./missing.sh`, `no-such-command-rein x`,
		`printenv PWD`, `printenv SHLVL`, `printenv _`, `env`, `sh -c 'echo "$0"; exit 7' name`,
		`true; ls`, `ls *.txt`, `echo $HOME`, `/usr/bin/env`, `/bin/true`,
		`noshebang`, `empty`, `short`, `notexec`, `else`, `else x`, "printenv SHLVL\n", "printenv SHLVL\n\n",
		"printenv SHLVL\n# c",
	}
	envs := func(work string) map[string][]string {
		path := "PATH=" + work + "/a:" + work + "/b:/usr/bin:/bin"
		return map[string][]string{
			"default":    nil,
			"path":       {path},
			"levels":     {path, "SHLVL=5", "PWD=/nonexistent", "X=1", "X=2"},
			"bad level":  {path, "SHLVL=-4"},
			"odd level":  {path, "SHLVL=5\n"},
			"zero level": {path, "SHLVL=007"},
			"high level": {path, "SHLVL=999"},
			"pwd":        {path, "PWD=" + work},
			"bash env":   {path, "BASH_ENV=/dev/null"},
			"bash vars":  {path, "IFS=x", "OLDPWD=/nonexistent", "=empty", "PPID=1", "_=x"},
		}
	}
	for _, mode := range []struct {
		name string
		l    func(work string) *sandbox.Landlock
	}{
		{"zygote", func(w string) *sandbox.Landlock { return &sandbox.Landlock{WorkDir: w} }},
		{"staged", func(w string) *sandbox.Landlock { return &sandbox.Landlock{WorkDir: w, Stage: true} }},
		{"percommand", func(w string) *sandbox.Landlock { return &sandbox.Landlock{WorkDir: w, PerCommand: true} }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			work := directWork(t)
			shell, direct := mode.l(work), mode.l(work)
			direct.Simple = cmdline.Simple
			t.Cleanup(func() { shell.Close(); direct.Close() })
			for envName, env := range envs(work) {
				for _, s := range scripts {
					c := sandbox.Cmd{Script: s, Dir: work, Env: env}
					want, err := shell.Exec(t.Context(), c)
					if err != nil {
						t.Fatalf("%s through the shell: %v", s, err)
					}
					got, err := direct.Exec(t.Context(), c)
					if err != nil {
						t.Fatalf("%s direct: %v", s, err)
					}
					// Each executor has a private temp dir of its own.
					want.Stdout, got.Stdout = privateTmp.ReplaceAllString(want.Stdout, "TMP"), privateTmp.ReplaceAllString(got.Stdout, "TMP")
					if s == "env" || s == "/usr/bin/env" {
						want.Stdout, got.Stdout = sortedLines(want.Stdout), sortedLines(got.Stdout)
					}
					if got.Stdout != want.Stdout || got.Stderr != want.Stderr || got.ExitCode != want.ExitCode {
						t.Errorf("%s (env %s):\ndirect: exit %d, stdout %q, stderr %q\nshell:  exit %d, stdout %q, stderr %q",
							s, envName, got.ExitCode, got.Stdout, got.Stderr, want.ExitCode, want.Stdout, want.Stderr)
					}
				}
			}
		})
	}
}

var privateTmp = regexp.MustCompile(`/rein-sandbox-h[0-9]+`)

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestDirectSkipsShell shows the shell is not started for a simple
// command and is for the rest: the executor's shell is a bash that notes
// each start in a log.
func TestDirectSkipsShell(t *testing.T) {
	work := directWork(t)
	log := filepath.Join(work, "shell.log")
	shell := filepath.Join(work, "bin", "bash")
	if err := os.MkdirAll(filepath.Dir(shell), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shell, []byte("#!/bin/bash\necho \"$2\" >>"+log+"\nexec /bin/bash \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	needLandlock(t)
	l := &sandbox.Landlock{WorkDir: work, Shell: shell, Simple: cmdline.Simple}
	t.Cleanup(func() { l.Close() })
	for _, c := range []struct {
		script   string
		viaShell bool
	}{
		{"true", false},
		{"ls -la", false},
		{"./hello.sh x", false},
		{"./noshebang.sh", true},
		{"./bad.sh", true}, // exec'd, failed, run by the shell
		{"true && true", true},
		{"echo hi", true},
		{"ls *", true},
	} {
		if err := os.WriteFile(log, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Exec(t.Context(), sandbox.Cmd{Script: c.script, Dir: work}); err != nil {
			t.Fatalf("%s: %v", c.script, err)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); (got == c.script) != c.viaShell || (got != "" && got != c.script) {
			t.Errorf("%s: the shell ran %q; want it to run it: %v", c.script, got, c.viaShell)
		}
	}
}
