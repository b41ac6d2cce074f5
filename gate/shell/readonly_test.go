package shell_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/shell"
)

// loadLines reads testdata/readonly/name: one command line per line, "\n"
// standing for a newline, # for comments.
func loadLines(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "readonly", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.ReplaceAll(line, `\n`, "\n"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// repoDir returns a work dir holding a git repository whose config sets
// what `git init` sets, plus extra (config lines appended to it).
func repoDir(t testing.TB, extra string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n" + extra
	if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func bashCall(cmd string) *gate.Call {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return &gate.Call{ID: "c1", Name: "run_bash", Args: args, Tool: bashTool()}
}

// sandboxes are the executors the proof is used under, and none.
var sandboxes = []struct {
	name string
	exec shell.Executor
}{
	{"landlock", shell.Executor{Sandboxed: true}},
	{"docker", shell.Executor{Sandboxed: true, TmpDir: "/tmp"}},
	{"none", shell.Executor{}},
}

// TestReadOnlyCorpus: under landlock or docker at least 90% of ordinary
// read-only commands are proven read-only and none of the dangerous ones;
// with no sandbox, none at all.
func TestReadOnlyCorpus(t *testing.T) {
	t.Parallel()
	read, danger := loadLines(t, "read.txt"), loadLines(t, "danger.txt")
	if len(read) < 120 || len(danger) < 80 {
		t.Fatalf("corpus too small: %d read-only, %d dangerous", len(read), len(danger))
	}
	work := repoDir(t, "")
	for _, sb := range sandboxes {
		z := shell.NewAnalyzer(shell.Options{WorkDir: work, Exec: sb.exec, ExecTool: "run_bash"})
		proven := 0
		for _, cmd := range read {
			if ok, why := z.ReadOnly(bashCall(cmd)); ok {
				proven++
			} else if sb.exec.Sandboxed {
				t.Logf("%s: not proven: %q: %s", sb.name, cmd, why)
			}
		}
		for _, cmd := range danger {
			if ok, _ := z.ReadOnly(bashCall(cmd)); ok {
				t.Errorf("%s: dangerous %q proven read-only", sb.name, cmd)
			}
		}
		for _, cmd := range danger { // the proof alone, without the analysis, refuses them too
			if c := bashCall(cmd); c.Commands()[0].File != nil && shell.ProveReadOnly(c.Commands()[0].File) == nil {
				t.Errorf("dangerous %q proven read-only by the proof alone", cmd)
			}
		}
		pct := 100 * float64(proven) / float64(len(read))
		t.Logf("%s: %d of %d read-only commands proven (%.1f%%); 0 of %d dangerous allowed", sb.name, proven, len(read), pct, len(danger))
		switch {
		case sb.exec.Sandboxed && pct < 90:
			t.Errorf("%s: %.1f%% of read-only commands proven, want at least 90%%", sb.name, pct)
		case !sb.exec.Sandboxed && proven != 0:
			t.Errorf("%s: %d commands proven without a sandbox, want 0", sb.name, proven)
		}
	}
}

// TestReadOnlyOtherTool: a command-role argument of another tool than the
// executor's runs where rein cannot see, so nothing is proven for it.
func TestReadOnlyOtherTool(t *testing.T) {
	t.Parallel()
	z := shell.NewAnalyzer(shell.Options{WorkDir: repoDir(t, ""), Exec: shell.Executor{Sandboxed: true}, ExecTool: "run_bash"})
	c := bashCall("ls")
	if ok, _ := z.ReadOnly(c); !ok {
		t.Fatal("ls in run_bash not proven")
	}
	c.Name = "mcp_shell"
	if ok, _ := z.ReadOnly(c); ok {
		t.Fatal("ls in another tool proven: it does not run in the sandbox")
	}
}

// TestReadOnlyGitConfig: git is proven only while the repository's config
// sets inert keys; a key that runs a program, an include or a submodule
// refuses the proof, however it is spelled, and a worktree's gitdir file
// is followed to the shared config.
func TestReadOnlyGitConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, extra string
		proven      bool
	}{
		{"clean", "", true},
		{"remote and branch", "[remote \"origin\"]\n\turl = https://x/y\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n", true},
		{"fsmonitor", "\tfsmonitor = ./x.sh\n", false},
		{"pager", "[core]\n\tpager = sh -c id\n", false},
		{"pager mixed case", "[CORE]\n\tPager = id\n", false},
		{"external diff", "[diff]\n\texternal = ./x.sh\n", false},
		{"textconv", "[diff \"bin\"]\n\ttextconv = ./x.sh\n", false},
		{"alias", "[alias]\n\tst = !id\n", false},
		{"include", "[include]\n\tpath = ../evil.cfg\n", false},
		{"includeIf", "[includeIf \"gitdir:/\"]\n\tpath = ../evil.cfg\n", false},
		{"submodule", "[submodule \"x\"]\n\turl = ../x\n", false},
		{"hooks path", "[core]\n\thooksPath = .hooks\n", false},
		{"old subsection", "[diff.bin]\n\ttextconv = ./x.sh\n", false},
		{"same line", "[core] pager = id\n", false},
		{"continued", "[user]\n\tname = a\\\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			z := shell.NewAnalyzer(shell.Options{WorkDir: repoDir(t, c.extra), Exec: shell.Executor{Sandboxed: true}, ExecTool: "run_bash"})
			for _, cmd := range []string{"git status", "git diff", "go list ./..."} {
				ok, why := z.ReadOnly(bashCall(cmd))
				if ok != c.proven {
					t.Errorf("%q proven = %v (%s), want %v", cmd, ok, why, c.proven)
				}
			}
			if ok, _ := z.ReadOnly(bashCall("ls")); !ok {
				t.Error("ls not proven: the git config concerns git alone")
			}
		})
	}
	t.Run("worktree", func(t *testing.T) {
		t.Parallel()
		main := repoDir(t, "\tfsmonitor = ./x.sh\n")
		wt := filepath.Join(main, ".git", "worktrees", "wt")
		if err := os.MkdirAll(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, "commondir"), []byte("../..\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, ".git"), []byte("gitdir: "+wt+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		z := shell.NewAnalyzer(shell.Options{WorkDir: work, Exec: shell.Executor{Sandboxed: true}, ExecTool: "run_bash"})
		if ok, _ := z.ReadOnly(bashCall("git status")); ok {
			t.Error("git status proven in a worktree whose shared config sets core.fsmonitor")
		}
	})
	t.Run("cd then git", func(t *testing.T) {
		t.Parallel()
		z := shell.NewAnalyzer(shell.Options{WorkDir: repoDir(t, ""), Exec: shell.Executor{Sandboxed: true}, ExecTool: "run_bash"})
		if ok, _ := z.ReadOnly(bashCall("cd vendor/x && git status")); ok {
			t.Error("git after cd proven: it may run in a nested repository whose config was not read")
		}
	})
}

// TestReadOnlyHeldOut runs the proof over the shell gate's own corpora,
// written before it: no command of the dangerous corpus is proven
// read-only under a sandbox. The proof alone refuses every one that
// writes, runs or connects; a read of a secret outside the work dir whose
// path only comes at run time (echo ~/.ssh/id_rsa | xargs cat) is left to
// the analysis (credential-read) and to the sandbox, which cannot read
// there; such commands are logged. How many benign ones
// are proven is logged (most of them build, test or edit, so they are not).
func TestReadOnlyHeldOut(t *testing.T) {
	t.Parallel()
	z := shell.NewAnalyzer(shell.Options{WorkDir: repoDir(t, ""), Exec: shell.Executor{Sandboxed: true}, ExecTool: "run_bash"})
	for _, e := range loadHeldOut(t, "shell-dangerous.jsonl") {
		c := bashCall(e.Command)
		if f := c.Commands()[0].File; f != nil && shell.ProveReadOnly(f) == nil {
			if e.Class == "credential-read" || strings.Contains(e.Command, "xargs cat") {
				t.Logf("read outside the work dir left to the analysis and the sandbox: %q", e.Command)
			} else {
				t.Errorf("dangerous (%s) %q proven read-only by the proof alone", e.Class, e.Command)
			}
		}
		if ok, _ := z.ReadOnly(bashCall(e.Command)); ok {
			t.Errorf("dangerous (%s) %q proven read-only", e.Class, e.Command)
		}
	}
	benign, proven := loadHeldOut(t, "shell-benign.jsonl"), 0
	for _, e := range benign {
		if ok, _ := z.ReadOnly(bashCall(e.Command)); ok {
			proven++
		}
	}
	t.Logf("benign corpus: %d of %d proven read-only", proven, len(benign))
}

type heldOut struct {
	Command string `json:"command"`
	Class   string `json:"class"`
}

func loadHeldOut(t testing.TB, name string) []heldOut {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []heldOut
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var e heldOut
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, e)
	}
	return out
}
