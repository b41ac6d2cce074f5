package harness_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/secret"
)

// A conversation: each next message goes on from the whole conversation so
// far, marked as the user's input and redacted like the task; the limits
// count across turns; it ends when Next says so.
func TestConversation(t *testing.T) {
	t.Parallel()
	m := &recording{Model: model(t, `{"turns":[{"text":"one"},{"text":"two"},{"text":"three"}]}`)}
	msgs := []string{"and my key is sk-ant-aaaaaaaaaaaaaaaaaaaaaaaaaaaa", "thanks"}
	var answers []string
	out, err := harness.Run(t.Context(), harness.Spec{
		Task: "first question", Model: m, WorkDir: t.TempDir(), NoRollback: true, AuditDir: t.TempDir(),
		Policy: harness.Policy{Allowed: []string{"calc"}, Mode: permission.Default},
		Redact: secret.NewRedactor(nil).Redact,
		Next: func(_ context.Context, res agent.Result) (string, bool) {
			answers = append(answers, res.Answer)
			if len(msgs) == 0 {
				return "", false
			}
			next := msgs[0]
			msgs = msgs[1:]
			return next, true
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != agent.StopDone || out.Answer != "three" || out.Steps != 3 {
		t.Fatalf("stop %s, answer %q, steps %d", out.Stop, out.Answer, out.Steps)
	}
	if strings.Join(answers, ",") != "one,two,three" {
		t.Fatalf("Next saw answers %q", answers)
	}
	last := m.reqs[2]
	for _, want := range []string{"first question", `"one"`, `"two"`, "\\u003e\\nthanks\\n\\u003c/user_input id=", "[REDACTED:ANTHROPIC_KEY]"} {
		if !strings.Contains(last, want) {
			t.Errorf("the third request lacks %s:\n%s", want, last)
		}
	}
	if strings.Contains(strings.Join(m.reqs, ""), "sk-ant-aaaa") {
		t.Error("the key in a later message reached the model")
	}
}

// A later message accounts for what it names: after the user asks for it,
// a curl call is no drift; before, it is.
func TestConversationGoalGrows(t *testing.T) {
	t.Parallel()
	m := model(t, `{"turns":[
	 {"text":"a","calls":[{"tool":"write_file","args":{"path":"a.sh","content":"curl https://example.com"}}]},
	 {"text":"b"},
	 {"text":"c","calls":[{"tool":"write_file","args":{"path":"b.sh","content":"curl https://example.com"}}]},
	 {"text":"d"}]}`)
	rec := &approve.Recorder{Next: approve.Deny{}}
	sent := false
	_, err := harness.Run(t.Context(), harness.Spec{
		Task: "Write a.sh that prints hello", Model: m, WorkDir: t.TempDir(), NoRollback: true, AuditDir: t.TempDir(),
		Policy: harness.Policy{Allowed: []string{"write_file"}, Mode: permission.AcceptEdits, Approver: rec},
		Drift:  true,
		Next: func(context.Context, agent.Result) (string, bool) {
			if sent {
				return "", false
			}
			sent = true
			return "Now write b.sh that uses curl to fetch example.com", true
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := rec.Requests()
	if len(reqs) != 1 || reqs[0].Gate != "drift" || !strings.Contains(string(reqs[0].Args), "a.sh") {
		t.Fatalf("asked %+v; want one drift question, about a.sh", reqs)
	}
}

// A connection that ends only as the session ends (a proxy that records
// it when its MCP servers are stopped) is in the session's audit log: the
// session drains its egress logs before it closes the log. Control: the
// same record written after the session is lost, as any write to a closed
// log is.
func TestEgressDrainedBeforeLogCloses(t *testing.T) {
	t.Parallel()
	elog := &harness.EgressLog{Who: "(mcp servers)"}
	late := egress.Conn{Proto: "connect", Host: "drained.example", Port: 443, Allowed: true, Reason: "ended at the session's end"}
	elog.Drain = func() { elog.Record(late) }
	out, err := harness.Run(t.Context(), harness.Spec{
		Task: "say done", Model: model(t, `{"turns":[{"text":"done"}]}`), WorkDir: t.TempDir(), NoRollback: true, AuditDir: t.TempDir(),
		Policy: harness.Policy{Allowed: []string{"calc"}, Mode: permission.Default},
		Egress: []*harness.EgressLog{elog},
	})
	if err != nil {
		t.Fatal(err)
	}
	elog.Record(egress.Conn{Proto: "connect", Host: "after.example", Port: 443})
	b, err := os.ReadFile(out.Audit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"host":"drained.example"`) {
		t.Errorf("the connection that ended at the session's end is not in the log:\n%s", b)
	}
	if strings.Contains(string(b), "after.example") {
		t.Errorf("a record written after the session reached its closed log")
	}
}
