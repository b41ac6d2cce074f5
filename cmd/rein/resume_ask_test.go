package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/internal/ptytest"
	"github.com/reinhq/rein/tool"
)

// prompted is a stderr that answers questions as a human would: once a
// step's marker has been written (the question is on the screen), it calls
// the step's answer, steps in order.
type prompted struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	steps []promptStep
}

type promptStep struct {
	marker string
	answer func()
}

func (p *prompted) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := p.buf.Len()
	p.buf.Write(b)
	for len(p.steps) > 0 && strings.Contains(p.buf.String()[max(0, from-len(p.steps[0].marker)):], p.steps[0].marker) {
		from = p.buf.Len()
		p.steps[0].answer()
		p.steps = p.steps[1:]
	}
	return len(b), nil
}

func (p *prompted) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

// mailSession writes the log of a session that died inside send_email, an
// irreversible call, after the human had approved it.
func mailSession(t *testing.T, dir string) (auditDir, id string) {
	t.Helper()
	auditDir = filepath.Join(dir, "audit")
	id = "20261202T120000Z-0badc0de"
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[{"text":"mail","calls":[{"tool":"send_email","args":{"to":"ann@example.com","subject":"Summary","body":"hi"}}]},{"text":"sent"}]}`)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "x"), "")
	w, err := audit.Create(auditDir, id)
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(map[string]any{"model": "scripted:" + script, "meta": map[string]any{"settings": map[string]any{
		"model": "scripted:" + script, "workdir": work, "config": map[string]any{"tools": map[string]any{"allow": []string{"send_email"}, "read_lines": 100}, "permissions": map[string]any{"mode": "default"}}}}})
	args := json.RawMessage(`{"to":"ann@example.com","subject":"Summary","body":"hi"}`)
	for _, r := range []audit.Record{
		{Type: audit.SessionStart, Task: "Mail Ann.", Config: meta},
		{Type: audit.ModelCall, Step: 1, Text: "mail", Calls: []string{"send_email"}},
		{Type: audit.Verdict, Step: 1, CallID: "call_1_1", Tool: "send_email", Args: args, Decision: audit.DecisionOf(gate.Allow), Gate: "approval", Reason: "approved"},
		{Type: audit.Intent, Step: 1, CallID: "call_1_1", Tool: "send_email", Args: args, Effect: audit.EffectOf(tool.Irreversible), Key: "k1"},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return auditDir, id
}

// rein resume asks as rein run asks: on a terminal, "run it again" puts the
// email back through the gates, the approver asks the human, and a yes
// sends it. Nobody asked, nobody is said to have said no.
func TestResumeAsksOnTheTerminal(t *testing.T) {
	for _, c := range []struct {
		name, typed string
		outbox      string
		saidNo      bool
	}{
		{"run again, approved", "r\n", `"outbox":1`, false},
		{"run again, refused", "r\n", `"outbox":0`, true},
		{"it happened", "y\n", `"outbox":0`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
			auditDir, id := mailSession(t, dir)
			pt := ptytest.Open(t, 80, 24)
			var out bytes.Buffer
			// The human answers each question once it shows: typed ahead,
			// an answer is discarded (approve.Lines.Fence).
			answer := "y\n"
			if c.saidNo {
				answer = "n\n"
			}
			errOut := &prompted{steps: []promptStep{
				{"Did it happen?", func() { pt.Type(t, c.typed) }},
				{"[y/N]", func() { pt.Type(t, answer) }},
			}}
			code := run(t.Context(), []string{"resume", id, "--audit-dir", auditDir, "--json", "--approval-timeout", "20s"},
				env{stdin: pt.Slave, stdout: &out, stderr: errOut})
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
			}
			if !strings.Contains(errOut.String(), "Did it happen?") {
				t.Fatalf("no question:\n%s", errOut.String())
			}
			asked := strings.Contains(errOut.String(), "approval needed")
			if asked != strings.HasPrefix(c.typed, "r") {
				t.Fatalf("approval asked: %v\n%s", asked, errOut.String())
			}
			if !strings.Contains(out.String(), c.outbox) {
				t.Fatalf("want %s in\n%s", c.outbox, out.String())
			}
			log, _ := os.ReadFile(audit.FileName(auditDir, id))
			if saidNo := bytes.Contains(log, []byte("the approver said no")); saidNo != c.saidNo {
				t.Fatalf("the log says the approver said no: %v, want %v\n%s", saidNo, c.saidNo, log)
			}
			if rep, err := audit.Verify(bytes.NewReader(log)); err != nil || !rep.Intact() || !rep.Complete {
				t.Fatalf("%+v %v", rep, err)
			}
		})
	}
}
