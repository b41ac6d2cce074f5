package rollback_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/session/rollback"
)

// journal returns the path of the env's journal.
func (e env) journal() string { return filepath.Join(e.state, sessionID, "journal.jsonl") }

func (e env) blob(id string) string { return filepath.Join(e.state, sessionID, "blobs", id) }

// TestTornJournalLine cuts the last journal line at every byte, as a kill
// or a power loss while Snapshot wrote it would, and checks that Restore
// still restores everything before it, ignores the cut line with a note,
// and fails nothing. The cut line's snapshot was not on disk, so its tool
// had not run.
func TestTornJournalLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a", "b.txt": "b"}, nil)
	s := e.open(t)
	e.agent(t, s).write("a.txt", "changed by the agent")
	_, err := s.Snapshot("b.txt") // its tool never ran
	must(t, err)
	must(t, s.Close())
	data, err := os.ReadFile(e.journal())
	must(t, err)
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("journal %q: want a's snapshot and left lines, then b's snapshot", data)
	}
	first, last := lines[0]+lines[1], lines[2]
	tails := []string{"\x00\x00\x00\x00", "\x00"} // a zero-filled tail, as some file systems leave
	for k := range len(last) - 1 {
		tails = append(tails, last[:k])
	}
	for _, tail := range tails {
		must(t, os.WriteFile(e.journal(), []byte(first+tail), 0o600))
		writeTree(t, e.work, map[string]string{"a.txt": "changed by the agent"})
		j, err := rollback.Load(e.state, sessionID)
		must(t, err)
		reports, err := j.Restore()
		must(t, err)
		if got := summary(reports); got != "restored a.txt\n" {
			t.Errorf("journal cut to %q: %s", tail, got)
		}
		// b.txt's blob was saved before its line: a stray blob, noted too.
		wantNotes := 1
		if tail != "" {
			wantNotes = 2
		}
		if len(j.Notes) != wantNotes || (tail != "" && !strings.Contains(j.Notes[0], "journal line 3 is incomplete")) {
			t.Fatalf("journal cut to %q: notes %q; want one about line 3 and one about blob 000003", tail, j.Notes)
		}
		if got := tree(t, e.work); !strings.Contains(got, `a.txt file -rw-r--r-- "a"`) {
			t.Errorf("journal cut to %q: %s", tail, got)
		}
	}
}

// TestHalfWrittenBlob: a blob whose Snapshot was cut off before its journal
// line is ignored with a note; the tool it was for had not run.
func TestHalfWrittenBlob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a", "b.txt": "bbbb"}, nil)
	s := e.open(t)
	e.agent(t, s).write("a.txt", "changed")
	must(t, s.Close())
	must(t, os.WriteFile(e.blob("000002.tmp"), []byte("bb"), 0o600))
	must(t, os.WriteFile(e.blob("000003"), []byte("bbbb"), 0o600))
	j, err := rollback.Load(e.state, sessionID)
	must(t, err)
	reports, err := j.Restore()
	must(t, err)
	if got := summary(reports); got != "restored a.txt\n" {
		t.Errorf("reports: %s", got)
	}
	if len(j.Notes) != 2 || !strings.Contains(j.Notes[0], "000002.tmp is not in the journal") {
		t.Errorf("notes %q; want one per stray blob", j.Notes)
	}
}

// TestDamagedStore: a whole journal line that is not valid, or a blob that
// does not match its line, cannot come from a crash (the blob is synced
// before its line is written): the path is reported Failed and left alone,
// and the rest is restored.
func TestDamagedStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(t *testing.T, e env)
		want   string
	}{{
		name:   "a blob cut short",
		damage: func(t *testing.T, e env) { must(t, os.Truncate(e.blob("000001"), 2)) },
		want:   "restored b.txt\nfailed a.txt: its snapshot 000001 is damaged: 2 bytes with another SHA-256 than the 5 bytes saved; the file was not touched\n",
	}, {
		name:   "a blob changed",
		damage: func(t *testing.T, e env) { must(t, os.WriteFile(e.blob("000001"), []byte("evil!"), 0o600)) },
		want:   "restored b.txt\nfailed a.txt: its snapshot 000001 is damaged: 5 bytes with another SHA-256 than the 5 bytes saved; the file was not touched\n",
	}, {
		name:   "a blob missing",
		damage: func(t *testing.T, e env) { must(t, os.Remove(e.blob("000001"))) },
		want:   "restored b.txt\nfailed a.txt: its snapshot 000001 cannot be read: open " + "BLOB" + ": no such file or directory\n",
	}, {
		name: "a line garbled",
		damage: func(t *testing.T, e env) {
			data, err := os.ReadFile(e.journal())
			must(t, err)
			must(t, os.WriteFile(e.journal(), bytes.Replace(data, []byte(`"kind":"file"`), []byte(`"kind":"fi1e"`), 1), 0o600))
		},
		want: "failed journal.jsonl: journal line 1 is damaged (unknown kind \"fi1e\")\nfailed journal.jsonl: journal line 2 is damaged (a left line for \"a.txt\", which has no snapshot before it)\nrestored b.txt\n",
	}, {
		name: "a line that names a path outside",
		damage: func(t *testing.T, e env) {
			data, err := os.ReadFile(e.journal())
			must(t, err)
			must(t, os.WriteFile(e.journal(), bytes.Replace(data, []byte(`"path":"a.txt"`), []byte(`"path":"../outside/a.txt"`), 1), 0o600))
		},
		want: "failed journal.jsonl: journal line 1 is damaged (not a relative path inside the work directory: \"../outside/a.txt\")\nfailed journal.jsonl: journal line 2 is damaged (a left line for \"a.txt\", which has no snapshot before it)\nrestored b.txt\n",
	}, {
		name: "an empty line",
		damage: func(t *testing.T, e env) {
			data, err := os.ReadFile(e.journal())
			must(t, err)
			must(t, os.WriteFile(e.journal(), append([]byte("\n"), data...), 0o600))
		},
		want: "failed journal.jsonl: journal line 1 is damaged (EOF)\nrestored b.txt\nrestored a.txt\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"a.txt": "aaaaa", "b.txt": "b"}, map[string]string{"a.txt": "outside"})
			s := e.open(t)
			a := e.agent(t, s)
			a.write("a.txt", "agent a")
			a.write("b.txt", "agent b")
			must(t, s.Close())
			tt.damage(t, e)
			want := strings.ReplaceAll(tt.want, "BLOB", e.blob("000001"))
			j, err := rollback.Load(e.state, sessionID)
			must(t, err)
			plan, err := j.Plan()
			must(t, err)
			if got := summary(plan); strings.ReplaceAll(got, "deleted", "restored") != strings.ReplaceAll(want, "; the file was not touched", "") {
				t.Errorf("Plan:\n%s\nwant:\n%s", got, want)
			}
			reports, err := j.Restore()
			must(t, err)
			if got := summary(reports); got != want {
				t.Errorf("Restore:\n%s\nwant:\n%s", got, want)
			}
			if strings.Contains(want, "failed a.txt") {
				if data, _ := os.ReadFile(filepath.Join(e.work, "a.txt")); string(data) != "agent a" {
					t.Errorf("a.txt = %q; a damaged snapshot must leave it alone", data)
				}
			}
			if data, _ := os.ReadFile(filepath.Join(e.outside, "a.txt")); string(data) != "outside" {
				t.Errorf("outside/a.txt = %q", data)
			}
		})
	}
}

// TestRestoreLeftovers: a restore killed between writing a temporary file
// and renaming it leaves the file behind; the next restore removes it.
func TestRestoreLeftovers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"d/a.txt": "a"}, nil)
	before := tree(t, e.work)
	s := e.open(t)
	e.agent(t, s).write("d/a.txt", "changed")
	must(t, s.Close())
	// What a restore killed mid-write leaves: half the bytes, or a link.
	writeTree(t, e.work, map[string]string{"d/.rein-rollback-" + sessionID + "-000001.tmp": "hal"})
	e.restore(t, nil)
	if got := tree(t, e.work); got != before {
		t.Errorf("after a restore over a leftover:\n%s\nwant\n%s", got, before)
	}
	writeTree(t, e.work, map[string]string{"d/a.txt": "changed", "victim.txt": "v"})
	symlink(t, "../victim.txt", filepath.Join(e.work, "d", ".rein-rollback-"+sessionID+"-000001.tmp"))
	e.restore(t, nil)
	if got := tree(t, e.work); got != before+"\nvictim.txt file -rw-r--r-- \"v\"" {
		t.Errorf("a planted link under the temporary name was followed:\n%s", got)
	}
}

// helperEnv names the variable that turns the test binary into a session
// that writes files until it is killed (see TestMain).
const helperEnv = "REIN_ROLLBACK_TEST_SESSION"

// restoreEnv names the variable that turns the test binary into a
// rollback of the session whose store is in its value's directory (see
// helperRestore).
const restoreEnv = "REIN_ROLLBACK_TEST_RESTORE"

func TestMain(m *testing.M) {
	if dirs := os.Getenv(helperEnv); dirs != "" {
		helperSession(dirs)
		return
	}
	if state := os.Getenv(restoreEnv); state != "" {
		helperRestore(state)
		return
	}
	os.Exit(m.Run())
}

// helperRestore is `rein rollback` in a process of its own: it restores
// the session in state and prints the reports; it exits 3 when the store
// is busy (another rollback holds it), 2 on another error.
func helperRestore(state string) {
	reports, err := rollback.Restore(state, sessionID)
	if errors.Is(err, rollback.ErrBusy) {
		fmt.Println("busy")
		os.Exit(3)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Print(summary(reports))
}

// helperSession runs a session in WORK with its store in STATE (dirs is
// "WORK\nSTATE") that writes and edits files forever, printing a line after
// each tool call.
func helperSession(dirs string) {
	work, state, _ := strings.Cut(dirs, "\n")
	e := env{work: work, state: state}
	t := procTB{}
	s, err := rollback.Open(e.state, sessionID, e.work)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	a := e.agent(t, s)
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		switch n := i % 30; {
		case n < 10:
			a.write(fmt.Sprintf("f%d.txt", n), strings.Repeat(fmt.Sprintf("write %d\n", i), 1000))
		case n < 20:
			a.write(fmt.Sprintf("new/n%d.txt", n), fmt.Sprintf("new %d", i))
		default:
			a.call("edit_file", map[string]any{"path": fmt.Sprintf("f%d.txt", n-20), "old_string": "write", "new_string": fmt.Sprintf("edit %d", i), "replace_all": true})
		}
		fmt.Fprintln(out, i)
		out.Flush()
	}
}

// procTB is the little of testing.TB a helper process uses: a failure
// ends the process.
type procTB struct{ testing.TB }

func (procTB) Helper()                  {}
func (procTB) Cleanup(func())           {}
func (procTB) Context() context.Context { return context.Background() }
func (procTB) Fatal(args ...any)        { fmt.Fprintln(os.Stderr, args...); os.Exit(2) }
func (procTB) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}

// TestKilledSession kills a session at different moments — after k tool
// calls, while it goes on saving and writing — and checks that a restore
// then brings the work directory back exactly, failing nothing.
func TestKilledSession(t *testing.T) {
	t.Parallel()
	for _, k := range []int{0, 1, 5, 12, 25, 40} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			for i := range 10 {
				files[fmt.Sprintf("f%d.txt", i)] = strings.Repeat("original line\n", 500)
			}
			e := newEnv(t, files, nil)
			before := tree(t, e.work)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+e.work+"\n"+e.state)
			stdout, err := cmd.StdoutPipe()
			must(t, err)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			must(t, cmd.Start())
			sc := bufio.NewScanner(stdout)
			for range k + 1 {
				if !sc.Scan() {
					cmd.Wait()
					t.Fatalf("the session ended early: %s", stderr.String())
				}
			}
			must(t, cmd.Process.Kill())
			cmd.Wait()
			reports := e.restore(t, nil)
			for _, r := range reports {
				if r.Action == rollback.Failed {
					t.Errorf("after a kill after %d calls: failed %s: %s", k, r.Path, r.Err)
				}
			}
			if got := tree(t, e.work); got != before {
				t.Errorf("after a kill after %d calls and a restore:\n%s\nwant\n%s", k, got, before)
			}
		})
	}
}

// TestToolTempLeftovers: the temporary files rein's file tools leave when
// killed mid-write (".rein-" + 16 base32 characters + ".tmp") are removed
// from the touched directories, and nothing else is: a user's file that
// only looks like one survives.
func TestToolTempLeftovers(t *testing.T) {
	t.Parallel()
	users := []string{
		"ABCDEFGHIJKLMNOP.tmp",        // 16 base32 characters, no prefix
		"xrein-ABCDEFGHIJKLMNOP.tmp",  // another prefix
		".rein-abcdefghijklmnop.tmp",  // not base32 as the tools write it
		".rein-ABCDEFGHIJKLMNO.tmp",   // 15
		".rein-ABCDEFGHIJKLMNOPQ.tmp", // 17
		".rein-ABCDEFGHIJKLMNOP.tmpx", // another suffix
		".rein-ABCDEFGHIJKLMN01.tmp",  // 0 and 1 are not base32
	}
	files := map[string]string{"d/a.txt": "a"}
	for _, n := range users {
		files["d/"+n] = "the user's " + n
	}
	e := newEnv(t, files, nil)
	before := tree(t, e.work)
	s := e.open(t)
	e.agent(t, s).write("d/a.txt", "changed")
	tools := []string{".rein-ABCDEFGHIJKLMNOP.tmp", ".rein-234567QRSTUVWXYZ.tmp"}
	for _, n := range tools {
		writeTree(t, e.work, map[string]string{"d/" + n: "half a writ"})
	}
	got := summary(e.restore(t, s))
	if want := "deleted d/" + tools[0] + "\ndeleted d/" + tools[1] + "\nrestored d/a.txt\n"; got != want {
		t.Errorf("restore reports:\n%s\nwant:\n%s", got, want)
	}
	if got := tree(t, e.work); got != before {
		t.Errorf("after the restore:\n%s\nwant:\n%s", got, before)
	}
}

// rollbackScene is a finished session over many files, with the user's
// edits after it: what a rollback must restore, and what it must keep.
type rollbackScene struct {
	env
	want string // the work directory after an exact rollback
}

func newRollbackScene(t *testing.T) rollbackScene {
	t.Helper()
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%d/f%d.txt", i%3, i)] = strings.Repeat(fmt.Sprintf("original %d\n", i), 20000)
	}
	e := newEnv(t, files, nil)
	s := e.open(t)
	a := e.agent(t, s)
	for i := range 30 {
		a.write(fmt.Sprintf("d%d/f%d.txt", i%3, i), fmt.Sprintf("the agent's %d\n", i))
		a.write(fmt.Sprintf("new%d/n%d.txt", i%2, i), "made by the agent")
	}
	must(t, s.Close())
	// After the session the user edits two of the agent's files and fills
	// one it created: those stay as the user left them.
	user := map[string]string{"d0/f3.txt": "the user's edit", "d2/f29.txt": "the user's too", "new1/n7.txt": "the user's draft"}
	writeTree(t, e.work, user)
	want := map[string]string{}
	maps.Copy(want, files)
	maps.Copy(want, user)
	w := newEnv(t, want, nil)
	return rollbackScene{env: e, want: tree(t, w.work)}
}

// startRestore starts a rollback in its own process.
func (sc rollbackScene) startRestore(t *testing.T) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), restoreEnv+"="+sc.state)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	return cmd, &out
}

// check restores in this process and checks that the work directory is
// exactly as it should be: the originals back, the user's edits kept.
func (sc rollbackScene) check(t *testing.T, what string) {
	t.Helper()
	for _, r := range sc.restore(t, nil) {
		if r.Action == rollback.Failed {
			t.Errorf("%s: failed %s: %s", what, r.Path, r.Err)
		}
	}
	if got := tree(t, sc.work); got != sc.want {
		t.Errorf("%s: the work directory is\n%s\nwant\n%s", what, got, sc.want)
	}
}

// TestKilledRollback kills real rollback processes with SIGKILL at random
// points, several times over the same store, and checks that a rollback
// after them restores exactly what it should and keeps the user's edits.
func TestKilledRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rollbacks as processes")
	}
	t.Parallel()
	// How long does a whole rollback take here?
	sc := newRollbackScene(t)
	start := time.Now()
	cmd, out := sc.startRestore(t)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("a whole rollback: %v\n%s", err, out)
	}
	took := time.Since(start)
	sc.check(t, "after a whole rollback")
	rng := rand.New(rand.NewPCG(15, 1))
	killed := 0
	for round := range 4 {
		sc := newRollbackScene(t)
		for range 5 {
			cmd, _ := sc.startRestore(t)
			timer := time.AfterFunc(time.Duration(rng.Int64N(int64(took))), func() { _ = cmd.Process.Kill() })
			if err := cmd.Wait(); err != nil {
				killed++
			}
			timer.Stop()
		}
		sc.check(t, fmt.Sprintf("round %d: after 5 rollbacks killed at random", round))
	}
	t.Logf("%d of 20 rollbacks killed before they finished (a whole one takes %v); every rollback after them exact", killed, took)
}

// TestConcurrentRollbacks runs two rollbacks of one session at once, as two
// processes: one restores, the other waits for it or is refused as busy;
// neither fails a path, and the work directory ends exact.
func TestConcurrentRollbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rollbacks as processes")
	}
	t.Parallel()
	for round := range 3 {
		sc := newRollbackScene(t)
		c1, o1 := sc.startRestore(t)
		c2, o2 := sc.startRestore(t)
		for i, c := range []*exec.Cmd{c1, c2} {
			out := []*bytes.Buffer{o1, o2}[i]
			if err := c.Wait(); err != nil && c.ProcessState.ExitCode() != 3 {
				t.Fatalf("round %d: rollback %d: %v\n%s", round, i+1, err, out)
			}
			if strings.Contains(out.String(), "failed") {
				t.Errorf("round %d: rollback %d failed a path:\n%s", round, i+1, out)
			}
			if !strings.Contains(out.String(), "kept d0/f3.txt: changed since the session wrote it") && out.String() != "busy\n" {
				t.Errorf("round %d: rollback %d did not keep the user's edit:\n%s", round, i+1, out)
			}
		}
		sc.check(t, fmt.Sprintf("round %d: after two rollbacks at once", round))
	}
}
