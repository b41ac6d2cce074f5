package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ptytest"
	"github.com/reinhq/rein/sandbox"
)

// promptReady is what the line editor sends once it has the terminal in
// raw mode, after the fence: bracketed paste on. Its count is the count of
// prompts that can take keys.
const promptReady = "\x1b[?2004h"

// waitPrompt waits for the n-th "You:" prompt to be ready for keys.
func waitPrompt(t *testing.T, p *ptytest.PTY, n int) *ptytest.Screen {
	t.Helper()
	return p.WaitFor(t, promptReady, n)
}

// rein chat in a real terminal, driven as a person would with a scripted
// model: Ctrl-C in the middle of a command cancels that turn only (the
// command's processes die, the prompt comes back, the session and its log
// go on); a write is approved from its diff; the model's question is
// answered and the answer reaches it; /undo puts the last turn's file
// back; a per-turn step cap ends only its turn.
func TestChatInATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rein as a subprocess in a terminal")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	work := workIn(t, dir)
	writeFile(t, filepath.Join(work, "notes.txt"), "keep\nold\n")
	script := filepath.Join(dir, "chat.json")
	writeFile(t, script, `{"turns":[
	 {"text":"sleeping","calls":[{"tool":"run_bash","args":{"command":"echo $$ > sleep.pid.tmp && mv sleep.pid.tmp sleep.pid && exec sleep 30"}}]},
	 {"text":"writing","calls":[{"tool":"write_file","args":{"path":"notes.txt","content":"keep\nnew\n"}}]},
	 {"text":"asking","calls":[{"tool":"ask_question","args":{"question":"Which colour?"}}]},
	 {"text":"Noted the colour."},
	 {"text":"one","calls":[{"tool":"calc","args":{"expression":"1+1"}}]},
	 {"text":"two","calls":[{"tool":"calc","args":{"expression":"2+2"}}]},
	 {"text":"three","calls":[{"tool":"calc","args":{"expression":"3+3"}}]},
	 {"text":"All done."}]}`)
	backend := "landlock"
	if _, err := sandbox.LandlockStatus(); err != nil {
		backend = "none"
	}
	p := ptytest.Open(t, 120, 40)
	p.ANSI = true // the line editor draws with escape sequences
	cmd := exec.Command(exe, "--model", "scripted:"+script, "--workdir", work, "--tools", "run_bash,write_file,ask_question,calc",
		"--sandbox", backend, "--max-steps", "3", "--durability", "flush", "--audit-dir", filepath.Join(dir, "audit"))
	cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	unstaged(t, filepath.Join(dir, "config"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Slave, p.Slave, p.Slave
	// Its own session with the terminal as its controlling one: Ctrl-C
	// typed there is a SIGINT to rein, as in a shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	// Turn 1: a command, cancelled with Ctrl-C while it runs.
	waitPrompt(t, p, 1)
	p.Type(t, "Wait a while.\r")
	p.WaitFor(t, "[y/N]", 1)
	p.Type(t, "y\n")
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(work, "sleep.pid")); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command never started:\n%s", p.Raw())
		}
	}
	p.Type(t, "\x03")
	p.WaitFor(t, "rein: turn 1 stopped: cancelled", 1)
	waitPrompt(t, p, 2)
	for deadline := time.Now().Add(20 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the command (pid %d) outlived the cancelled turn", pid)
		}
	}

	// Turn 2: a write approved from its diff, then a question answered.
	p.Type(t, "Update the notes.\r")
	sc := p.WaitFor(t, "[y/s/a/N/x]", 1) // a write offers the answers that stick
	screen := sc.String()
	for _, want := range []string{"path:    notes.txt", "--- a/notes.txt", "+++ b/notes.txt", "-old", "+new", " keep"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the approval does not show %q:\n%s", want, screen)
		}
	}
	if strings.Index(screen, "path:    notes.txt") > strings.Index(screen, "--- a/notes.txt") {
		t.Fatalf("the path does not come before the diff:\n%s", screen)
	}
	p.Type(t, "y\n")
	p.WaitFor(t, "the agent asks: Which colour?", 1)
	p.WaitFor(t, "Your answer", 1)
	p.Type(t, "blue\n")
	p.WaitFor(t, "Noted the colour.", 1)
	p.WaitFor(t, "rein: turn 2 changed notes.txt", 1)
	waitPrompt(t, p, 3)
	if b, _ := os.ReadFile(filepath.Join(work, "notes.txt")); string(b) != "keep\nnew\n" {
		t.Fatalf("the approved write did not happen: %q", b)
	}

	// /undo puts the file back as it was before turn 2.
	p.Type(t, "/undo\r")
	p.WaitFor(t, "rein: undo: restored notes.txt", 1)
	if b, _ := os.ReadFile(filepath.Join(work, "notes.txt")); string(b) != "keep\nold\n" {
		t.Fatalf("/undo left %q", b)
	}

	// Turn 3 reaches the per-turn step cap; turn 4 goes on.
	waitPrompt(t, p, 4)
	p.Type(t, "Count.\r")
	p.WaitFor(t, "rein: turn 3 stopped: step cap reached", 1)
	waitPrompt(t, p, 5)
	p.Type(t, "go on\r")
	p.WaitFor(t, "All done.", 1)
	waitPrompt(t, p, 6)
	p.Type(t, "/exit\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rein chat: %v\n%s", err, p.Raw())
	}
	if os.Getenv("REIN_SHOW_CHAT") != "" {
		t.Log(p.Raw())
	}

	logs, _ := filepath.Glob(filepath.Join(dir, "audit", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("want the one conversation's log, got %v", logs)
	}
	data, _ := os.ReadFile(logs[0])
	for _, want := range []string{`"type":"abort"`, "cancelled turn 1", `The user answered: blue`, `"stop":"max_steps"`, `"answer":"All done."`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the log lacks %s", want)
		}
	}
	verify := exec.Command(exe, "audit", "verify", logs[0])
	verify.Env = cmd.Env
	if out, err := verify.CombinedOutput(); err != nil {
		t.Errorf("the log does not verify: %v\n%s", err, out)
	}
}

// A conversation whose turn was cancelled with Ctrl-C, and then left,
// goes on in a new rein with --resume: in the same log, told how its last
// turn ended, and the model's next answer reaches the terminal.
func TestChatResumeAfterCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rein as a subprocess in a terminal")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	work := workIn(t, dir)
	script := filepath.Join(dir, "chat.json")
	writeFile(t, script, `{"turns":[
	 {"text":"sleeping","calls":[{"tool":"run_bash","args":{"command":"echo $$ > sleep.pid.tmp && mv sleep.pid.tmp sleep.pid && exec sleep 30"}}]},
	 {"text":"Picked up where we were."}]}`)
	backend := "landlock"
	if _, err := sandbox.LandlockStatus(); err != nil {
		backend = "none"
	}
	auditDir := filepath.Join(dir, "audit")
	environ := append(os.Environ(), "REIN_TEST_MAIN=1", "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	unstaged(t, filepath.Join(dir, "config"))
	start := func(args ...string) (*ptytest.PTY, *exec.Cmd) {
		p := ptytest.Open(t, 120, 40)
		p.ANSI = true
		cmd := exec.Command(exe, args...)
		cmd.Env = environ
		cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Slave, p.Slave, p.Slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return p, cmd
	}
	p, cmd := start("--model", "scripted:"+script, "--workdir", work, "--tools", "run_bash", "--sandbox", backend,
		"--durability", "flush", "--audit-dir", auditDir)
	waitPrompt(t, p, 1)
	p.Type(t, "Wait a while.\r")
	p.WaitFor(t, "[y/N]", 1)
	p.Type(t, "y\n")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(work, "sleep.pid")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command never started:\n%s", p.Raw())
		}
	}
	p.Type(t, "\x03")
	p.WaitFor(t, "rein: turn 1 stopped: cancelled", 1)
	waitPrompt(t, p, 2)
	p.Type(t, "\x04")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rein chat: %v\n%s", err, p.Raw())
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	id := strings.TrimSuffix(filepath.Base(logs[0]), ".jsonl")

	p, cmd = start("--resume", id[:len(id)-4], "--audit-dir", auditDir, "--durability", "flush")
	p.WaitFor(t, "going on with session "+id, 1)
	p.WaitFor(t, "its last turn ended before it was finished (aborted", 1)
	waitPrompt(t, p, 1)
	p.Type(t, "Where were we?\r")
	p.WaitFor(t, "Picked up where we were.", 1)
	p.WaitFor(t, "rein: turn 2:", 1)
	waitPrompt(t, p, 2)
	p.Type(t, "/exit\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rein chat --resume: %v\n%s", err, p.Raw())
	}
	data, _ := os.ReadFile(logs[0])
	for _, want := range []string{`"type":"abort"`, `"task":"Where were we?"`, `"answer":"Picked up where we were."`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the log lacks %s", want)
		}
	}
	verify := exec.Command(exe, "audit", "verify", logs[0])
	verify.Env = environ
	if out, err := verify.CombinedOutput(); err != nil {
		t.Errorf("the log does not verify: %v\n%s", err, out)
	}
}

// startChat starts rein chat on a new terminal with the state (and so the
// prompt's history) in dir.
func startChat(t *testing.T, dir, script string, environ ...string) (*ptytest.PTY, *exec.Cmd) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := ptytest.Open(t, 100, 30)
	p.ANSI = true
	cmd := exec.Command(exe, "--model", "scripted:"+script, "--workdir", workIn(t, dir), "--tools", "calc",
		"--durability", "flush", "--audit-dir", filepath.Join(dir, "audit"))
	cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "TERM=xterm-256color", "NO_COLOR=", "CI=")
	cmd.Env = append(cmd.Env, environ...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Slave, p.Slave, p.Slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return p, cmd
}

// waitScreen waits until the screen shows want (the raw output may hold
// styles inside it).
func waitScreen(t *testing.T, p *ptytest.PTY, cols, rows int, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		sc, err := ptytest.RenderANSI(p.Raw(), cols, rows)
		if err != nil {
			t.Fatalf("the terminal was sent: %v", err)
		}
		if sc.Shows(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q:\n%s", want, sc)
		}
	}
}

// taskOf is the first message of the session whose log is the only one in
// dir/audit not in seen.
func taskOf(t *testing.T, dir string, seen map[string]bool) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "audit", "*.jsonl"))
	for _, l := range logs {
		if seen[l] {
			continue
		}
		seen[l] = true
		data, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		var start struct {
			Type string `json:"type"`
			Task string `json:"task"`
		}
		first, _, _ := bytes.Cut(data, []byte("\n"))
		if err := json.Unmarshal(first, &start); err != nil || start.Type != "session_start" {
			t.Fatalf("the log %s does not start with its session_start: %v\n%s", l, err, first)
		}
		return start.Task
	}
	t.Fatalf("no new session log among %v", logs)
	return ""
}

// The line editor in a real terminal: Up recalls a message sent in an
// earlier run (the history is kept in the state dir), a bracketed paste of
// several lines is one message, Ctrl+J puts a new line in a message, a
// spinner shows while the model thinks, and Ctrl-D at an empty prompt
// leaves.
func TestChatEditorInATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rein as a subprocess in a terminal")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "chat.json")
	writeFile(t, script, `{"turns":[{"text":"ok 1"},{"text":"ok 2"},{"text":"ok 3"},{"text":"ok 4"}]}`)
	seen := map[string]bool{}

	// Run 1: one message, then Ctrl-D.
	p, cmd := startChat(t, dir, script)
	waitPrompt(t, p, 1)
	p.Type(t, "remember this\r")
	p.WaitFor(t, "ok 1", 1)
	waitPrompt(t, p, 2)
	p.Type(t, "\x04")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Ctrl-D at an empty prompt: %v\n%s", err, p.Raw())
	}
	if got := taskOf(t, dir, seen); got != "remember this" {
		t.Fatalf("run 1 sent %q", got)
	}
	if !strings.Contains(p.Raw(), "thinking") {
		t.Errorf("no spinner while the model thought:\n%q", p.Raw())
	}

	// Run 2: Up recalls run 1's message; a paste of two lines and a line
	// typed after Ctrl+J make one message.
	p, cmd = startChat(t, dir, script)
	waitPrompt(t, p, 1)
	p.Type(t, "\x1b[A") // Up
	waitScreen(t, p, 100, 30, "You: remember this")
	p.Type(t, "\r")
	p.WaitFor(t, "ok 1", 1)
	if got := taskOf(t, dir, seen); got != "remember this" {
		t.Fatalf("Up and Enter in run 2 sent %q, want run 1's message", got)
	}
	waitPrompt(t, p, 2)
	p.Type(t, "\x1b[200~line one\r\nline two\x1b[201~")
	p.Type(t, "\x0athird line\r") // Ctrl+J: a new line, not a message
	sc := p.WaitFor(t, "ok 2", 1)
	for _, want := range []string{"You: line one", "...  line two", "...  third line"} {
		if !sc.Shows(want) {
			t.Errorf("the transcript does not show %q:\n%s", want, sc)
		}
	}
	waitPrompt(t, p, 3)
	p.Type(t, "\x04")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run 2: %v\n%s", err, p.Raw())
	}
	if strings.Contains(p.Raw(), "ok 3") {
		t.Fatalf("the pasted lines became more than one message:\n%s", p.Raw())
	}
	h, err := os.ReadFile(filepath.Join(dir, "rein", "history"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\"remember this\"\n\"line one\\nline two\\nthird line\"\n"; string(h) != want {
		t.Fatalf("the history file holds\n%s\nwant\n%s", h, want)
	}
}

// rein on a terminal whose TERM would let termenv ask for the background
// colour (bubbletea v1's package init does) sends no query at start-up:
// nothing is written but its own output, and nothing is read.
func TestNoTerminalQueryAtStart(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := ptytest.Open(t, 80, 24)
	cmd := exec.Command(exe, "version")
	cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "TERM=xterm-256color", "CI=", "XDG_STATE_HOME="+t.TempDir())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Slave, p.Slave, p.Slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		t.Fatalf("rein version: %v\n%q", err, p.Raw())
	}
	sc := p.WaitFor(t, "rein ", 1) // the strict screen: any escape sequence fails
	if strings.Contains(p.Raw(), "\x1b") {
		t.Fatalf("rein sent an escape sequence at start-up:\n%q\n%s", p.Raw(), sc)
	}
}

// NO_COLOR: the terminal interface stays (editor, spinner) but puts no
// colour on the screen; without it the same chat is coloured.
func TestChatNoColor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rein as a subprocess in a terminal")
	}
	colour := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|9[0-7]|38;5;[0-9]+)[0-9;]*m`)
	for _, tt := range []struct {
		name      string
		noColor   string
		wantColor bool
	}{{"NO_COLOR set", "1", false}, {"NO_COLOR unset", "", true}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "chat.json")
			writeFile(t, script, `{"turns":[{"text":"**fine**"}]}`)
			p, cmd := startChat(t, dir, script, "NO_COLOR="+tt.noColor)
			waitPrompt(t, p, 1)
			p.Type(t, "hello\r")
			waitPrompt(t, p, 2)
			p.Type(t, "\x04")
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v\n%s", err, p.Raw())
			}
			if got := colour.MatchString(p.Raw()); got != tt.wantColor {
				t.Fatalf("colour on the screen: %v, want %v\n%q", got, tt.wantColor, p.Raw())
			}
			if !strings.Contains(p.Raw(), "thinking") && !strings.Contains(p.Raw(), "fine") {
				t.Fatalf("the chat did not run:\n%q", p.Raw())
			}
		})
	}
}
