package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/telemetry"
	"github.com/reinhq/rein/tool"
)

func TestMain(m *testing.M) { os.Exit(testenv.IsolateState(m)) }

// secret is an environment value the audit log redacts; the model repeats
// it in its text and a call's arguments.
const secret = "sk-live-0123456789abcdefghijkl"

// script: a read-only call that runs, an irreversible one a human
// approves, a call to a tool nobody offered (refused), then the answer.
const script = `{"turns":[
	{"text":"Echoing the key ` + secret + `.","calls":[{"tool":"echo","args":{"text":"key ` + secret + `"}}]},
	{"text":"Deploying.","calls":[{"tool":"deploy","args":{"env":"prod"}}]},
	{"text":"Trying something else.","calls":[{"tool":"format_disk","args":{}}]},
	{"text":"Done: deployed."}]}`

// runSession runs the scripted session with spans into a fresh in-memory
// exporter, and returns the spans and the session's audit log.
func runSession(t testing.TB, content bool, provider func(*sdktrace.TracerProvider) bool) ([]sdktrace.ReadOnlySpan, string) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	var observe func(audit.Record)
	if provider(tp) {
		observe = telemetry.NewSession(context.Background(), telemetry.Options{Provider: tp, Content: content}).Observe
	}
	res := run(t, observe)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return exp.GetSpans().Snapshots(), res.Audit
}

func run(t testing.TB, observe func(audit.Record)) guarded.Result {
	t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	echo := tool.New(tool.Spec{Name: "echo", Description: "Says its text back.", Effect: tool.ReadOnly,
		Schema: []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)},
		func(_ context.Context, a struct {
			Text string `json:"text"`
		}) (string, error) {
			return a.Text, nil
		})
	deploy := tool.New(tool.Spec{Name: "deploy", Description: "Deploys.", Effect: tool.Irreversible,
		Schema: []byte(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"],"additionalProperties":false}`)},
		func(_ context.Context, a struct {
			Env string `json:"env"`
		}) (string, error) {
			return "deployed " + a.Env, nil
		})
	s, err := guarded.New(context.Background(), guarded.Options{
		WorkDir: t.TempDir(), Model: scripted.New("anthropic:claude-test", sc), Tools: []tool.Tool{echo, deploy},
		AuditDir: filepath.Join(state, "audit"), RollbackDir: filepath.Join(state, "rollback"),
		Environ: []string{"PATH=/usr/bin", "DEPLOY_API_KEY=" + secret}, NoSystem: true,
		Approver: approve.Fixed(true), Observe: observe,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res := s.Run(context.Background(), "Deploy with key "+secret)
	if res.Err != nil {
		t.Fatalf("session: %v", res.Err)
	}
	return res
}

func attrs(s sdktrace.ReadOnlySpan) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// TestSpansOfAScriptedSession: the session is one invoke_agent span with a
// chat span per model call and an execute_tool span per tool call, each
// with the GenAI attributes and rein's, and the hashes are the log's.
func TestSpansOfAScriptedSession(t *testing.T) {
	spans, log := runSession(t, false, func(*sdktrace.TracerProvider) bool { return true })
	var root sdktrace.ReadOnlySpan
	var chats, tools []sdktrace.ReadOnlySpan
	for _, s := range spans {
		switch attrs(s)[telemetry.AttrOperationName].AsString() {
		case telemetry.OpInvokeAgent:
			root = s
		case telemetry.OpChat:
			chats = append(chats, s)
		case telemetry.OpExecuteTool:
			tools = append(tools, s)
		default:
			t.Errorf("span %q without a known operation", s.Name())
		}
	}
	if root == nil || len(chats) != 4 || len(tools) != 3 {
		t.Fatalf("spans: root %v, %d chat, %d execute_tool; want 1, 4, 3", root != nil, len(chats), len(tools))
	}
	ra := attrs(root)
	if root.Name() != "invoke_agent rein" || ra[telemetry.AttrProviderName].AsString() != "anthropic" ||
		ra[telemetry.AttrRequestModel].AsString() != "claude-test" || ra[telemetry.AttrStop].AsString() != "done" ||
		ra[telemetry.AttrConversationID].AsString() == "" || ra[telemetry.AttrToolCalls].AsInt64() != 3 {
		t.Errorf("invoke_agent span %q: %v", root.Name(), ra)
	}
	for _, s := range append(chats, tools...) {
		if s.Parent().SpanID() != root.SpanContext().SpanID() || s.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("%s is not a child of the session's span", s.Name())
		}
		if s.StartTime().After(s.EndTime()) || s.StartTime().Before(root.StartTime()) || s.EndTime().After(root.EndTime()) {
			t.Errorf("%s runs %v–%v, outside the session %v–%v", s.Name(), s.StartTime(), s.EndTime(), root.StartTime(), root.EndTime())
		}
	}
	for i, c := range chats {
		a := attrs(c)
		if c.Name() != "chat claude-test" || a[telemetry.AttrProviderName].AsString() != "anthropic" ||
			a[telemetry.AttrInputTokens].AsInt64() <= 0 || a[telemetry.AttrOutputTokens].AsInt64() <= 0 || a[telemetry.AttrStep].AsInt64() != int64(i+1) {
			t.Errorf("chat span %d %q: %v", i, c.Name(), a)
		}
	}
	type want struct{ name, gate, verdict string }
	for i, w := range []want{
		{"execute_tool echo", "pipeline", "allow"},
		{"execute_tool deploy", "approval", "allow"},
		{"execute_tool format_disk", "availability", "deny"},
	} {
		s, a := tools[i], attrs(tools[i])
		if s.Name() != w.name || a[telemetry.AttrGate].AsString() != w.gate || a[telemetry.AttrVerdict].AsString() != w.verdict ||
			a[telemetry.AttrToolCallID].AsString() == "" || a[telemetry.AttrReason].AsString() == "" {
			t.Errorf("tool span %d: %q %v, want %+v", i, s.Name(), a, w)
		}
		refused := w.verdict == "deny"
		if a[telemetry.AttrRefused].AsBool() != refused || (s.Status().Code == codes.Error) != refused {
			t.Errorf("tool span %q: refused %v, status %v", s.Name(), a[telemetry.AttrRefused].AsBool(), s.Status())
		}
	}
	if attrs(tools[1])[telemetry.AttrEffect].AsString() != "irreversible" {
		t.Errorf("deploy's span has no effect class: %v", attrs(tools[1]))
	}

	// Each span's hash is the SHA-256 of its record's line: the prev of
	// the record after it. A span ending on the last record (the stop)
	// has no next: its hash is checked by recomputing it from the line.
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	prevOf := map[int64]string{} // seq → the prev of the record after it
	var lines [][]byte
	for line := range bytes.Lines(b) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if audit.Padding(line) {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		prevOf[int64(r.Seq)-1] = r.Prev
		lines = append(lines, line)
	}
	for _, s := range spans {
		a := attrs(s)
		seq, hash := a[telemetry.AttrAuditSeq].AsInt64(), a[telemetry.AttrAuditHash].AsString()
		if seq == 0 || hash == "" {
			t.Errorf("%s carries no audit record", s.Name())
			continue
		}
		if next, ok := prevOf[seq]; ok && next != hash {
			t.Errorf("%s: hash %s, but the log's next record has prev %s", s.Name(), hash, next)
		}
		if _, ok := prevOf[seq]; !ok && int(seq) != len(lines) {
			t.Errorf("%s: record %d is not in the log", s.Name(), seq)
		}
	}
	// Off by default: no content, and the secret is nowhere.
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			switch string(kv.Key) {
			case telemetry.AttrOutputMessages, telemetry.AttrToolArguments, telemetry.AttrToolCallResult, telemetry.AttrTask, telemetry.AttrAnswer:
				t.Errorf("%s has content attribute %s with content off", s.Name(), kv.Key)
			}
			if strings.Contains(kv.Value.String(), "sk-live") {
				t.Errorf("%s: %s holds the secret", s.Name(), kv.Key)
			}
		}
	}
}

// TestContentIsTheRedactedLog: with content on, the spans hold the text
// the audit log holds — after redaction — and the secret never.
func TestContentIsTheRedactedLog(t *testing.T) {
	spans, log := runSession(t, true, func(*sdktrace.TracerProvider) bool { return true })
	logText, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(logText, []byte(secret)) {
		t.Fatal("the audit log holds the secret: redaction is off, the test proves nothing")
	}
	found := map[string]bool{}
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			v := kv.Value.String()
			if strings.Contains(v, "sk-live") {
				t.Errorf("%s: %s holds the secret: %s", s.Name(), kv.Key, v)
			}
			switch string(kv.Key) {
			case telemetry.AttrOutputMessages, telemetry.AttrToolArguments, telemetry.AttrToolCallResult, telemetry.AttrTask, telemetry.AttrAnswer:
				found[string(kv.Key)] = true
			}
		}
	}
	for _, k := range []string{telemetry.AttrOutputMessages, telemetry.AttrToolArguments, telemetry.AttrToolCallResult, telemetry.AttrTask, telemetry.AttrAnswer} {
		if !found[k] {
			t.Errorf("no span has %s with content on", k)
		}
	}
	for _, s := range spans {
		if a := attrs(s); a[telemetry.AttrToolName].AsString() == "echo" {
			if got := a[telemetry.AttrToolArguments].AsString(); !strings.Contains(string(logText), strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(got, `{"text":"`), `"}`), `"`, `\"`)) || !strings.HasPrefix(got, `{"text":"key `) {
				t.Errorf("echo's arguments in the span %q are not the log's", got)
			}
		}
	}
}
