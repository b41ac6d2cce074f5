package guarded_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/tool"
)

// TestEvents: the typed callbacks see a session's steps in order — the
// model's text, each verdict, the human asked and answering, each result,
// the stop.
func TestEvents(t *testing.T) {
	var n atomic.Int32
	var got []string
	ev := &guarded.Events{
		ModelText: func(step int, text string, calls []string) {
			got = append(got, fmt.Sprintf("model %d %q %v", step, text, calls))
		},
		Verdict: func(v guarded.Verdict) {
			got = append(got, fmt.Sprintf("verdict %s %s %s", v.Tool, v.Decision, v.Gate))
		},
		ApprovalAsked: func(r approve.Request) { got = append(got, "asked "+r.Tool) },
		ApprovalAnswered: func(r approve.Request, yes bool) {
			got = append(got, fmt.Sprintf("answered %s %v", r.Tool, yes))
		},
		Result: func(r guarded.ToolResult) { got = append(got, fmt.Sprintf("result %s refused=%v", r.Tool, r.Refused)) },
		Stop:   func(reason stop.Reason, answer string) { got = append(got, "stop "+string(reason)+" "+answer) },
	}
	state, dir := t.TempDir(), t.TempDir()
	sc, err := scripted.Parse([]byte(`{"turns":[{"text":"go","calls":[{"tool":"tally"},
	  {"tool":"write_file","args":{"path":".git/hooks/pre-commit","content":"x"}}]},{"text":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := guarded.New(t.Context(), guarded.Options{
		WorkDir: dir, Model: scripted.New("t", sc), Tools: []tool.Tool{counter(&n)}, Events: ev,
		AuditDir: filepath.Join(state, "audit"), RollbackDir: filepath.Join(state, "rollback"), Environ: []string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res := s.Run(t.Context(), "tally"); res.Err != nil {
		t.Fatal(res.Err)
	}
	want := []string{
		`model 1 "go" [tally write_file]`,
		"verdict tally allow pipeline",
		"result tally refused=false",
		"asked write_file",
		"answered write_file false",
		"verdict write_file deny approval",
		`model 2 "done" []`,
		"stop done done",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
}
