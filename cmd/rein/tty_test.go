package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/internal/ptytest"
	"github.com/reinhq/rein/tool"
)

// mailRun runs rein run with a scripted model that sends one email, with
// stdin and stderr as given, and returns the exit code and stdout.
func mailRun(t *testing.T, stdin *os.File, stderr *os.File, errBuf *bytes.Buffer) (int, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	script := filepath.Join(dir, "mail.json")
	writeFile(t, script, `{"turns":[
	 {"text":"sending","calls":[{"tool":"send_email","args":{"to":"ann@example.com","subject":"Summary","body":"All done."}}]},
	 {"text":"finished"}]}`)
	var out bytes.Buffer
	e := env{stdin: stdin, stdout: &out, stderr: errBuf}
	if stderr != nil {
		e.stderr = stderr
	}
	code := run(t.Context(), []string{"run", "--model", "scripted:" + script, "--tools", "send_email", "--workdir", workIn(t, dir),
		"--audit-dir", filepath.Join(dir, "audit"), "--json", "Send Ann the summary."}, e)
	return code, out.String()
}

// rein run on a terminal asks about send_email: the prompt shows the call
// with the recipient right above [y/N]; "y" typed after it sends, anything
// else does not, and nothing typed before the question answers it.
func TestRunAsksOnTheTerminal(t *testing.T) {
	for _, c := range []struct {
		name   string
		ahead  string // typed before the question
		typed  string // typed once [y/N] is on the screen
		outbox string
	}{
		{"y", "", "y\n", `"outbox":1`},
		{"Enter", "", "\n", `"outbox":0`},
		{"sure", "", "sure\n", `"outbox":0`},
		{"typed ahead", "y\ny\n", "\n", `"outbox":0`},
		{"typed ahead then y", "n\n", "y\n", `"outbox":1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := ptytest.Open(t, 80, 24)
			p.Type(t, c.ahead)
			type result struct {
				code int
				out  string
			}
			done := make(chan result, 1)
			go func() {
				code, out := mailRun(t, p.Slave, p.Slave, nil)
				done <- result{code, out}
			}()
			sc := p.WaitFor(t, "[y/N]", 1)
			for _, want := range []string{"rein: approval needed", "tool:    send_email", "gate:    confirm", "to:      ann@example.com", "body:    All done.", "[y/N]"} {
				if !sc.Shows(want) {
					t.Errorf("the screen lacks %q:\n%s", want, sc)
				}
			}
			l, row := sc.Lines(), sc.CursorRow()
			if !strings.Contains(l[row], "[y/N]") || !strings.Contains(l[row-1]+l[row-2], "to:      ann@example.com") {
				t.Errorf("the recipient is not right above the question:\n%s", sc)
			}
			p.Type(t, c.typed)
			r := <-done
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.out, p.Raw())
			}
			if !strings.Contains(r.out, c.outbox) {
				t.Errorf("typed %q ahead and %q after: want %s in\n%s\n%s", c.ahead, c.typed, c.outbox, r.out, p.Raw())
			}
		})
	}
}

// Issue 15 item 15: /dev/null as stdin is a character device but not a
// terminal: nobody is asked, the call is refused with a reason that says
// so, and no prompt is printed.
func TestDevNullIsNoTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var errOut bytes.Buffer
	code, out := mailRun(t, null, nil, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut.String())
	}
	if strings.Contains(errOut.String(), "[y/N]") || strings.Contains(errOut.String(), "end of input") {
		t.Errorf("/dev/null got a prompt:\n%s", errOut.String())
	}
	for _, want := range []string{"no terminal to ask"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	if !strings.Contains(out, `"outbox":0`) || !strings.Contains(out, "no terminal to ask: refused") {
		t.Errorf("the refusal does not say why, or the email was sent:\n%s", out)
	}
}

// Attack: on a terminal the conversation's "You:" is answered only by what
// is typed after it: a line typed ahead (a late "y" meant for a prompt, say)
// never becomes a message to the model. The line editor reads the first
// message; the "y" and Enter after it are either dropped with the editor
// that read them or discarded by the next prompt's fence.
func TestChatDiscardsTypeAhead(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	script := filepath.Join(dir, "chat.json")
	writeFile(t, script, `{"turns":[{"text":"hi back"},{"text":"second answer"}]}`)
	p := ptytest.Open(t, 80, 24)
	p.ANSI = true
	done := make(chan int, 1)
	go func() {
		done <- run(t.Context(), []string{"--model", "scripted:" + script, "--workdir", workIn(t, dir), "--audit-dir", filepath.Join(dir, "audit")},
			env{stdin: p.Slave, stdout: p.Slave, stderr: p.Slave})
	}()
	waitPrompt(t, p, 1)
	p.Type(t, "hello\ry\r") // the y is typed ahead of the next prompt
	p.WaitFor(t, "hi back", 1)
	waitPrompt(t, p, 2)
	p.Type(t, "/exit\r")
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Raw())
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "audit", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("want one audit log, got %v", logs)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "the user said: y") || strings.Contains(p.Raw(), "second answer") {
		t.Errorf("the typed-ahead y became a message:\n%s", data)
	}
}

// Attack: an "r" typed ahead of rein resume's question does not say "run
// the irreversible call again": only the answer typed after it counts.
func TestResumeQuestionIgnoresTypeAhead(t *testing.T) {
	dir := t.TempDir()
	auditDir := filepath.Join(dir, "audit")
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[{"text":"mail","calls":[{"tool":"send_email","args":{"to":"ann@example.com","body":"hi"}}]},{"text":"sent"}]}`)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "x"), "")
	const id = "20261202T120000Z-0badc0de"
	w, err := audit.Create(auditDir, id)
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(map[string]any{"model": "scripted:" + script, "meta": map[string]any{"settings": map[string]any{
		"model": "scripted:" + script, "workdir": work, "config": map[string]any{"tools": map[string]any{"allow": []string{"send_email"}, "read_lines": 100}, "permissions": map[string]any{"mode": "default"}}}}})
	args := json.RawMessage(`{"to":"ann@example.com","body":"hi"}`)
	for _, r := range []audit.Record{
		{Type: audit.SessionStart, Task: "Mail Ann.", Config: meta},
		{Type: audit.ModelCall, Step: 1, Text: "mail", Calls: []string{"send_email"}},
		{Type: audit.Verdict, Step: 1, CallID: "call_1_1", Tool: "send_email", Args: args, Decision: audit.DecisionOf(gate.Allow), Gate: "approval"},
		{Type: audit.Intent, Step: 1, CallID: "call_1_1", Tool: "send_email", Args: args, Effect: audit.EffectOf(tool.Irreversible), Key: "k1"},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	p := ptytest.Open(t, 80, 24)
	p.Type(t, "r\n")
	done := make(chan int, 1)
	go func() {
		var out bytes.Buffer
		done <- run(t.Context(), []string{"resume", id, "--audit-dir", auditDir}, env{stdin: p.Slave, stdout: &out, stderr: p.Slave})
	}()
	p.WaitFor(t, "[Enter] stop here: ", 1)
	p.Type(t, "\n")
	if code := <-done; code != exitStopped {
		t.Fatalf("exit %d, want %d (stopped): the typed-ahead r answered\n%s", code, exitStopped, p.Raw())
	}
}
