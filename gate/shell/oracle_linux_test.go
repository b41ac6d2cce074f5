//go:build linux

package shell

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/protect"
	"github.com/reinhq/rein/sandbox"
)

// TestMain lets the test binary serve as the landlock helper, which the
// execution oracle runs under strace.
func TestMain(m *testing.M) {
	if sandbox.IsHelper() {
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// execTimeout bounds one command run by the oracle.
const execTimeout = 5 * time.Second

// execOracle is the analyzer's differential safety oracle: a command the
// analyzer allows in the landlock sandbox (no network, only the work dir
// writable) is run there for real, under strace, in a work dir seeded with
// a git repository and the files a protected path names; it fails if the
// command changed a protected path, opened an internet socket, or wrote
// outside the work dir and the sandbox's private temp dir: each of which
// the analysis, by allowing, said it would not do.
//
// Git's own files inside .git other than hooks (config, index, refs) are
// not counted: the analyzer lets git write its own repository (only a key
// whose value git runs asks), so a commit that updates .git/index is no
// discrepancy.
type execOracle struct {
	l       *sandbox.Landlock
	work    string // the work dir, emptied and seeded before each command
	seed    string // what it is seeded with
	traces  string // strace's output, one file per command: trace.PID
	tmp     string // the sandbox's private temp dir, as commands see it
	opts    Options
	protect *protect.List
	self    string // the helper binary (this test binary)
}

// newExecOracle sets the oracle up, or says why it cannot run here.
func newExecOracle(tb testing.TB) (*execOracle, error) {
	tb.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		return nil, fmt.Errorf("strace: %w (apt-get install strace)", err)
	}
	if _, err := sandbox.LandlockStatus(); err != nil {
		return nil, fmt.Errorf("landlock: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir := tb.TempDir()
	o := &execOracle{work: filepath.Join(dir, "work"), seed: filepath.Join(dir, "seed"), traces: filepath.Join(dir, "traces"),
		protect: protect.Default()}
	for _, d := range []string{o.work, o.seed, o.traces} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := makeSeed(tb, o.seed); err != nil {
		return nil, err
	}
	// The helper is strace running the test binary as the helper: every
	// command, and everything it starts, is traced; -z keeps the calls
	// that succeeded, -y names the files of descriptors. Each command has
	// a trace file of its own, so that what a previous command left
	// running cannot write into the next one's.
	wrapper := filepath.Join(dir, "helper")
	script := fmt.Sprintf("#!/bin/sh\nexec %s -f -qq -z -y -s 256 -e trace=%%file,%%network -o %s/trace.$$ -- %s \"$@\"\n",
		shQuote(strace), shQuote(o.traces), shQuote(self))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return nil, err
	}
	o.l = &sandbox.Landlock{Helper: wrapper, WorkDir: o.work, PerCommand: true}
	tb.Cleanup(func() { _ = o.l.Close() })
	o.self = self
	res, err := o.l.Exec(context.Background(), sandbox.Cmd{Script: `printf %s "$TMPDIR"`, Dir: o.work, Timeout: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("the sandbox under strace: %w", err)
	}
	if res.ExitCode != 0 || !filepath.IsAbs(res.Stdout) {
		return nil, fmt.Errorf("the sandbox under strace: exit %d, %q, %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	o.tmp = res.Stdout
	if ents, err := os.ReadDir(o.traces); err != nil || len(ents) == 0 {
		return nil, fmt.Errorf("strace wrote no trace (%v)", err)
	}
	o.opts = Options{WorkDir: o.work, Home: fakeHome, Exec: Executor{Sandboxed: true}}
	return o, nil
}

// makeSeed fills dir with a small git repository and a file at a path of
// every kind a protected rule names, so that a command has something to
// change.
func makeSeed(tb testing.TB, dir string) error {
	files := map[string]string{
		"README.md": "# x\n", "main.go": "package main\n", "src/a.txt": "a\n", "x.py": "print(1)\n",
		".bashrc": "# rc\n", ".envrc": "", ".vscode/tasks.json": "{}\n", ".github/workflows/ci.yml": "on: push\n",
		"Makefile": "all:\n\ttrue\n", "tools/README": "tools\n", "f": "a\n", "f.txt": "a\n", "notes.txt": "n\n", "go.mod": "module x\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	// programs of the project: w writes where its argument says, hook and
	// rc write protected paths of their own choosing
	for name, text := range map[string]string{"w": `echo x >> "$1"`, "hook": "echo x >> .git/hooks/pre-commit", "rc": "echo x >> .bashrc"} {
		if err := os.WriteFile(filepath.Join(dir, "tools", name), []byte("#!/bin/sh\n"+text+"\n"), 0o755); err != nil {
			return err
		}
	}
	git := exec.Command("sh", "-c", "git init -q && git -c user.name=t -c user.email=t@e add -A && "+
		"git -c user.name=t -c user.email=t@e commit -qm seed && printf '#!/bin/sh\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit")
	git.Dir = dir
	if out, err := git.CombinedOutput(); err != nil {
		tb.Logf("git: %s", out)
		return fmt.Errorf("seeding a git repository: %w", err)
	}
	return nil
}

// check judges src and, if the analysis allows it, runs it and returns
// what it did that the analysis said it would not, or "".
func (o *execOracle) check(ctx context.Context, src string) (string, error) {
	a := Analyze(src, o.opts)
	if a.Decision != gate.Allow || strings.ContainsRune(src, 0) {
		return "", nil
	}
	if err := o.reseed(); err != nil {
		return "", err
	}
	before, err := o.snapshot()
	if err != nil {
		return "", err
	}
	if err := o.clearTraces(); err != nil {
		return "", err
	}
	if _, err := o.l.Exec(ctx, sandbox.Cmd{Script: src, Dir: o.work, Timeout: execTimeout}); err != nil {
		return "", fmt.Errorf("running %q: %w", src, err)
	}
	after, err := o.snapshot()
	if err != nil {
		return "", err
	}
	var bad []string
	for rel, sum := range after {
		if before[rel] != sum && o.counts(rel) {
			bad = append(bad, "changed the protected path "+rel)
		}
	}
	for rel := range before {
		if _, ok := after[rel]; !ok && o.counts(rel) {
			bad = append(bad, "removed the protected path "+rel)
		}
	}
	seen, err := o.traced()
	if err != nil {
		return "", fmt.Errorf("%q: %w", src, err)
	}
	bad = append(bad, seen...)
	if len(bad) == 0 {
		return "", nil
	}
	return fmt.Sprintf("%q was allowed (%s) but in the sandbox it %s", src, a.Summary(), strings.Join(bad, "; ")), nil
}

// counts reports whether a change to rel (relative to the work dir) is
// one the analysis promises not to make when it allows.
func (o *execOracle) counts(rel string) bool {
	if _, ok := o.protect.Match(rel); !ok {
		return false
	}
	return !strings.HasPrefix(rel, ".git/") || strings.HasPrefix(rel, ".git/hooks/")
}

// clearTraces removes the traces of earlier commands.
func (o *execOracle) clearTraces() error {
	ents, err := os.ReadDir(o.traces)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.Remove(filepath.Join(o.traces, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// reseed empties the work dir and copies the seed into it.
func (o *execOracle) reseed() error {
	ents, err := os.ReadDir(o.work)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := filepath.Join(o.work, e.Name())
		_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(q, 0o755) // a command may have made a directory unwritable
			}
			return nil
		})
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return os.CopyFS(o.work, os.DirFS(o.seed))
}

// snapshot returns, for every path in the work dir, its type, mode and
// content's hash (a link's target).
func (o *execOracle) snapshot() (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(o.work, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(o.work, p)
		if rel == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		sum := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			sum += " -> " + t
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			sum += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[filepath.ToSlash(rel)] = sum
		return nil
	})
	return out, err
}

// writeCall matches a successful call that creates, changes or removes a
// file, with its directory descriptor's path and its path argument.
var writeCall = regexp.MustCompile(`^\d+\s+(open|openat|openat2|creat|mkdir|mkdirat|unlink|unlinkat|rmdir|rename|renameat|renameat2|` +
	`link|linkat|symlink|symlinkat|mknod|mknodat|chmod|fchmodat|chown|lchown|fchownat|truncate|utimensat)\((.*)\) = (\d+)`)

// inetSocket matches a socket of an internet family that was made.
var inetSocket = regexp.MustCompile(`^\d+\s+socket\(AF_INET6?,.*\) = \d+`)

// traced reads the trace of the last command: from the helper's exec of
// the command's shell on (what the helper does to set the sandbox up is not the
// command's), the internet sockets made and the files written outside the
// work dir and the private temp dir.
func (o *execOracle) traced() ([]string, error) {
	ents, err := os.ReadDir(o.traces)
	if err != nil {
		return nil, err
	}
	if len(ents) != 1 {
		return nil, fmt.Errorf("%d traces for one command", len(ents))
	}
	b, err := os.ReadFile(filepath.Join(o.traces, ents[0].Name()))
	if err != nil {
		return nil, err
	}
	var bad []string
	started := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !started {
			// The helper's exec of the shell is its first exec of
			// another program. A thread of the helper makes it, so strace
			// may print it as "<... execve resumed>) = 0", without its
			// arguments.
			started = strings.Contains(line, "execve") && !strings.Contains(line, o.self)
			continue
		}
		if inetSocket.MatchString(line) {
			bad = append(bad, "opened an internet socket: "+line)
			continue
		}
		m := writeCall.FindStringSubmatch(line)
		if m == nil || !callWrites(m[1], m[2]) {
			continue
		}
		for _, p := range callPaths(m[2]) {
			if !o.writable(p) {
				bad = append(bad, "wrote "+p+": "+line)
			}
		}
	}
	if !started && len(b) > 0 {
		return nil, fmt.Errorf("the trace shows no shell started: %.300s … %s", b, b[max(0, len(b)-1500):])
	}
	return bad, sc.Err()
}

// callWrites reports whether a call of name with args changes the file system:
// an open only with a flag that writes.
func callWrites(name, args string) bool {
	if !strings.HasPrefix(name, "open") && name != "creat" {
		return true
	}
	return name == "creat" || strings.Contains(args, "O_WRONLY") || strings.Contains(args, "O_RDWR") ||
		strings.Contains(args, "O_CREAT") || strings.Contains(args, "O_TRUNC")
}

// pathArg matches a path argument: an optional "<dir>" of a directory
// descriptor (AT_FDCWD</x> or 3</x>), then a quoted name.
var pathArg = regexp.MustCompile(`(?:(?:AT_FDCWD|\d+)<([^>]*)>, )?"((?:[^"\\]|\\.)*)"`)

// callPaths returns the absolute paths a call names, each resolved against
// its directory descriptor when relative.
func callPaths(args string) []string {
	var out []string
	for _, m := range pathArg.FindAllStringSubmatch(args, -1) {
		p := m[2]
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			if m[1] == "" {
				continue // relative to a directory the trace does not name
			}
			p = filepath.Join(m[1], p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// writable reports whether the analysis allows writing p: inside the work
// dir or the private temp dir, or a device that takes writes harmlessly.
func (o *execOracle) writable(p string) bool {
	return under(p, o.work) || under(p, o.tmp) || writableDevice(p) || strings.HasPrefix(p, "/proc/self/fd/") ||
		strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "pipe:") || strings.HasPrefix(p, "socket:")
}

// fuzzOracle returns the execution oracle for FuzzAnalyze when
// REIN_FUZZ_EXEC=1, else nil.
func fuzzOracle(f *testing.F) *execOracle {
	if os.Getenv("REIN_FUZZ_EXEC") != "1" {
		return nil
	}
	o, err := newExecOracle(f)
	if err != nil {
		testenv.Need(f, "strace", err)
	}
	return o
}

// execCheck runs the oracle on src, when there is one.
func (o *execOracle) execCheck(t *testing.T, src string) {
	if o == nil {
		return
	}
	msg, err := o.check(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if msg != "" {
		t.Fatal(msg)
	}
}

// TestExecOracleCorpus runs the execution oracle over the fuzzer's seed
// corpus, so that CI exercises it: every seed the analyzer allows in the
// landlock sandbox is run there and must do nothing the analysis said it
// would not.
func TestExecOracleCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every allowed seed command in the sandbox")
	}
	// Two oracles, each with its own work dir and executor, take every
	// other seed: a command waits on the sandbox and on strace as much as
	// it computes.
	if _, err := exec.LookPath("strace"); err != nil {
		testenv.Need(t, "strace", err)
	}
	if _, err := sandbox.LandlockStatus(); err != nil {
		testenv.Need(t, "strace", err)
	}
	const workers = 2
	seeds := fuzzSeeds(t)
	var ran [workers]int
	t.Run("seeds", func(t *testing.T) {
		for w := range workers {
			t.Run(strconv.Itoa(w), func(t *testing.T) {
				t.Parallel()
				o, err := newExecOracle(t)
				if err != nil {
					testenv.Need(t, "strace", err)
				}
				for i := w; i < len(seeds); i += workers {
					src := seeds[i]
					if Analyze(src, o.opts).Decision != gate.Allow {
						continue
					}
					ran[w]++
					msg, err := o.check(t.Context(), src)
					if err != nil {
						t.Fatal(err)
					}
					if msg != "" {
						t.Error(msg)
					}
				}
			})
		}
	})
	total := 0
	for _, n := range ran {
		total += n
	}
	if total < 50 {
		t.Fatalf("only %d seed commands were run; the oracle is not exercised", total)
	}
	t.Logf("%d seed commands run in the sandbox", total)
}

// TestExecOracleCatches: the oracle is not vacuous. A command that changes
// a protected path is caught when it is run, whatever the analysis said;
// one that writes only inside the work dir passes.
func TestExecOracleCatches(t *testing.T) {
	o, err := newExecOracle(t)
	if err != nil {
		testenv.Need(t, "strace", err)
	}
	// Programs of the project write protected paths: the analysis allows
	// them (it judges names, not what programs do).
	for _, c := range []struct {
		src    string
		caught bool
	}{
		{"./tools/w out.txt", false},
		{"./tools/hook", true},
		{"./tools/rc", true},
		{"sh tools/rc", true},
		{"echo x > out.txt && git add out.txt && git -c user.name=t -c user.email=t@e commit -qm x", false},
	} {
		if a := Analyze(c.src, o.opts); a.Decision != gate.Allow {
			t.Fatalf("%q: %s; the test needs a command the analysis allows", c.src, a.Summary())
		}
		msg, err := o.check(t.Context(), c.src)
		if err != nil {
			t.Fatal(err)
		}
		if (msg != "") != c.caught {
			t.Errorf("%q: oracle says %q, want caught %v", c.src, msg, c.caught)
		}
	}
	// What the trace shows is read too.
	for _, c := range []struct {
		line string
		bad  bool
	}{
		{`12 openat(AT_FDCWD</w>, "/etc/x", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</etc/x>`, true},
		{`12 openat(AT_FDCWD</etc>, "x", O_WRONLY|O_CREAT, 0666) = 3</etc/x>`, true},
		{`12 openat(AT_FDCWD</etc>, "passwd", O_RDONLY|O_CLOEXEC) = 3</etc/passwd>`, false},
		{`12 openat(AT_FDCWD</w>, "/dev/null", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</dev/null>`, false},
		{`12 socket(AF_INET, SOCK_STREAM, IPPROTO_IP) = 3<socket:[1]>`, true},
		{`12 socket(AF_UNIX, SOCK_STREAM, 0) = 3<socket:[1]>`, false},
	} {
		if err := o.clearTraces(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(o.traces, "trace.1"), []byte("1 execve(\"/bin/sh\", [\"sh\", \"-c\", \"x\"], 0x0 /* 1 var */) = 0\n"+c.line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		bad, err := o.traced()
		if err != nil {
			t.Fatal(err)
		}
		if (len(bad) > 0) != c.bad {
			t.Errorf("%s: %q, want bad %v", c.line, bad, c.bad)
		}
	}
}
