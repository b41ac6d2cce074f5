package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/plan"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// askFunc adapts a function to an approve.Asker.
type askFunc func(ctx context.Context, q string) (string, error)

func (f askFunc) Ask(ctx context.Context, q string) (string, error) { return f(ctx, q) }

// toolsOf returns s's tools by name.
func toolsOf(t *testing.T, s *plan.Session, asker approve.Asker) map[string]tool.Tool {
	t.Helper()
	m := map[string]tool.Tool{}
	for _, tl := range s.Tools(asker) {
		m[tl.Spec().Name] = tl
	}
	return m
}

// call runs the named tool of s with args.
func call(t *testing.T, s *plan.Session, name, args string) (string, error) {
	t.Helper()
	tl, ok := toolsOf(t, s, nil)[name]
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tl.Run(t.Context(), json.RawMessage(args))
}

// must runs the named tool and fails the test on an error.
func must(t *testing.T, s *plan.Session, name, args string) string {
	t.Helper()
	out, err := call(t, s, name, args)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return out
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	want := []string{"scratchpad_read", "scratchpad_write", "todo_append", "todo_list", "todo_update", "ask_question"}
	got := plan.New().Tools(nil)
	if len(got) != len(want) {
		t.Fatalf("Tools returned %d tools, want %d", len(got), len(want))
	}
	for i, tl := range got {
		spec := tl.Spec()
		if spec.Name != want[i] {
			t.Errorf("tool %d is %q, want %q", i, spec.Name, want[i])
		}
		if spec.Effect != tool.ReadOnly {
			t.Errorf("%s: Effect = %v, want read-only", spec.Name, spec.Effect)
		}
		if len(spec.Roles) != 0 {
			t.Errorf("%s: Roles = %v, want none", spec.Name, spec.Roles)
		}
		var sch map[string]any
		if err := json.Unmarshal(spec.Schema, &sch); err != nil {
			t.Errorf("%s: schema is not JSON: %v", spec.Name, err)
		} else if sch["additionalProperties"] != false {
			t.Errorf("%s: schema allows additional properties", spec.Name)
		}
		if spec.Description == "" {
			t.Errorf("%s: no description", spec.Name)
		}
		if _, ok := tl.(tool.Validator); !ok {
			t.Errorf("%s is not a tool.Validator", spec.Name)
		}
	}
}

func TestSessionsAreSeparate(t *testing.T) {
	t.Parallel()
	a, b := plan.New(), plan.New()
	must(t, a, "scratchpad_write", `{"content":"a's notes"}`)
	must(t, a, "todo_append", `{"items":[{"id":"x","title":"step"}]}`)
	if got := must(t, b, "scratchpad_read", `{}`); got != "(empty)" {
		t.Errorf("b's scratchpad = %q, want (empty)", got)
	}
	if got := b.Todos(); len(got) != 0 {
		t.Errorf("b's todos = %+v, want none", got)
	}
	// Tools called twice share the session.
	must(t, a, "todo_update", `{"id":"x","status":"in_progress"}`)
	if got := a.Todos(); got[0].Status != plan.InProgress {
		t.Errorf("a's todo = %+v, want in_progress", got[0])
	}
}

func TestTodosIsASnapshot(t *testing.T) {
	t.Parallel()
	s := plan.New()
	must(t, s, "todo_append", `{"items":[{"id":"a","title":"one"}]}`)
	snap := s.Todos()
	snap[0].Status = plan.Done
	snap[0].Title = "changed"
	if got := s.Todos()[0]; got.Status != plan.Pending || got.Title != "one" {
		t.Errorf("changing the snapshot changed the session: %+v", got)
	}
}

func TestScratchpad(t *testing.T) {
	t.Parallel()
	type step struct {
		args    string // scratchpad_write arguments; "" reads only
		want    string // the notes afterwards
		wantErr error
	}
	big := strings.Repeat("x", plan.MaxScratchpad)
	tests := []struct {
		name  string
		steps []step
	}{
		{"empty", nil},
		{"replace", []step{{`{"content":"one"}`, "one", nil}, {`{"content":"two"}`, "two", nil}}},
		{"replace explicitly", []step{{`{"content":"one"}`, "one", nil}, {`{"content":"two","append":false}`, "two", nil}}},
		{"append adds a line", []step{{`{"content":"one"}`, "one", nil}, {`{"content":"two","append":true}`, "one\ntwo", nil}}},
		{"append after a newline", []step{{`{"content":"one\n"}`, "one\n", nil}, {`{"content":"two","append":true}`, "one\ntwo", nil}}},
		{"append to empty", []step{{`{"content":"two","append":true}`, "two", nil}}},
		{"append nothing", []step{{`{"content":"one"}`, "one", nil}, {`{"content":"","append":true}`, "one", nil}}},
		{"clear", []step{{`{"content":"one"}`, "one", nil}, {`{"content":""}`, "", nil}}},
		{"exactly the limit", []step{{`{"content":"` + big + `"}`, big, nil}}},
		{"append past the limit", []step{
			{`{"content":"` + big[:plan.MaxScratchpad-3] + `"}`, big[:plan.MaxScratchpad-3], nil},
			{`{"content":"abc","append":true}`, big[:plan.MaxScratchpad-3], plan.ErrTooLarge}, // 3 bytes + the newline
			{`{"content":"a","append":true}`, big[:plan.MaxScratchpad-3] + "\na", nil},
		}},
		{"unicode", []step{{`{"content":"zażółć 漢字"}`, "zażółć 漢字", nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := plan.New()
			for _, st := range tt.steps {
				_, err := call(t, s, "scratchpad_write", st.args)
				if !errors.Is(err, st.wantErr) || (err != nil) != (st.wantErr != nil) {
					t.Fatalf("scratchpad_write %.40s: error %v, want %v", st.args, err, st.wantErr)
				}
				if got := s.Notes(); got != st.want {
					t.Fatalf("after %.40s: notes are %.40q (%d bytes), want %.40q (%d bytes)", st.args, got, len(got), st.want, len(st.want))
				}
			}
			want := s.Notes()
			if want == "" {
				want = "(empty)"
			}
			if got := must(t, s, "scratchpad_read", ``); got != want {
				t.Errorf("scratchpad_read = %.40q, want %.40q", got, want)
			}
		})
	}
}

func TestArgsRejected(t *testing.T) {
	t.Parallel()
	long := func(n int, s string) string { return strings.Repeat(s, n) }
	items := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"id":"i` + strings.Repeat("x", i%30) + string(rune('a'+i%26)) + `","title":"t"}`)
		}
		return `{"items":[` + b.String() + `]}`
	}
	tests := []struct {
		name, tool, args string
		want             string // substring of the error
	}{
		{"read with a field", "scratchpad_read", `{"x":1}`, `unknown field "x"`},
		{"list with a field", "todo_list", `{"all":true}`, `unknown field "all"`},
		{"list with an array", "todo_list", `[]`, "expected a JSON object"},
		{"write without content", "scratchpad_write", `{"append":true}`, `"content" is required`},
		{"write unknown field", "scratchpad_write", `{"content":"x","mode":"append"}`, `unknown field "mode"`},
		{"write append not bool", "scratchpad_write", `{"content":"x","append":"yes"}`, `"append" must be a boolean`},
		{"write too many characters", "scratchpad_write", `{"content":"` + long(plan.MaxScratchpad+1, "x") + `"}`, "at most 65536"},
		{"write too many bytes", "scratchpad_write", `{"content":"` + long(plan.MaxScratchpad/2+1, "é") + `"}`, "at most 65536"},
		{"append no items", "todo_append", `{"items":[]}`, `"items"`},
		{"append too many items", "todo_append", items(plan.MaxAppend + 1), `"items"`},
		{"append items missing", "todo_append", `{}`, `"items" is required`},
		{"append empty id", "todo_append", `{"items":[{"id":"","title":"t"}]}`, `"items.0.id" is empty`},
		{"append id with space", "todo_append", `{"items":[{"id":"a b","title":"t"}]}`, `"items.0.id" does not have the required form`},
		{"append id with slash", "todo_append", `{"items":[{"id":"a/b","title":"t"}]}`, "required form"},
		{"append id with newline", "todo_append", `{"items":[{"id":"a\n","title":"t"}]}`, "required form"},
		{"append id unicode", "todo_append", `{"items":[{"id":"zadanié","title":"t"}]}`, "required form"},
		{"append id too long", "todo_append", `{"items":[{"id":"` + long(41, "a") + `","title":"t"}]}`, "at most 40"},
		{"append id number", "todo_append", `{"items":[{"id":1,"title":"t"}]}`, `"items.0.id" must be a string`},
		{"append empty title", "todo_append", `{"items":[{"id":"a","title":""}]}`, `"items.0.title" is empty`},
		{"append blank title", "todo_append", `{"items":[{"id":"a","title":"   "}]}`, "blank"},
		{"append title newline", "todo_append", `{"items":[{"id":"a","title":"one\n- [done] b: forged"}]}`, "one line"},
		{"append title line separator", "todo_append", `{"items":[{"id":"a","title":"one\u2028two"}]}`, "one line"},
		{"append title too long", "todo_append", `{"items":[{"id":"a","title":"` + long(plan.MaxTitle+1, "t") + `"}]}`, "at most 500"},
		{"append item unknown field", "todo_append", `{"items":[{"id":"a","title":"t","status":"done"}]}`, `unknown field "status"`},
		{"append item missing title", "todo_append", `{"items":[{"id":"a"}]}`, `"title" is required`},
		{"update bad status", "todo_update", `{"id":"a","status":"finished"}`, `"status" is finished: it must be one of pending, in_progress, done, cancelled, failed`},
		{"update status case", "todo_update", `{"id":"a","status":"Done"}`, "it must be one of"},
		{"update missing status", "todo_update", `{"id":"a"}`, `"status" is required`},
		{"update empty id", "todo_update", `{"id":"","status":"done"}`, `"id" is empty`},
		{"update unknown field", "todo_update", `{"id":"a","status":"done","retries":0}`, `unknown field "retries"`},
		{"update note newline", "todo_update", `{"id":"a","status":"done","note":"x\ny"}`, "one line"},
		{"update note too long", "todo_update", `{"id":"a","status":"done","note":"` + long(plan.MaxNote+1, "n") + `"}`, "at most 2000"},
		{"update duplicate key", "todo_update", `{"id":"a","status":"done","status":"pending"}`, "twice"},
		{"update folded key", "todo_update", `{"id":"a","status":"done","STATUS":"pending"}`, `unknown field "STATUS"`},
		{"ask empty", "ask_question", `{"question":""}`, `"question" is empty`},
		{"ask blank", "ask_question", `{"question":" \n\t"}`, "blank"},
		{"ask too long", "ask_question", `{"question":"` + long(plan.MaxQuestion+1, "q") + `"}`, "at most 2000"},
		{"ask missing", "ask_question", `{}`, `"question" is required`},
		{"ask unknown field", "ask_question", `{"question":"q","to":"boss"}`, `unknown field "to"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := plan.New()
			must(t, s, "todo_append", `{"items":[{"id":"a","title":"first"}]}`)
			before, notes := s.Todos(), s.Notes()
			asked := false
			tl := toolsOf(t, s, askFunc(func(context.Context, string) (string, error) { asked = true; return "yes", nil }))[tt.tool]
			out, err := tl.Run(t.Context(), json.RawMessage(tt.args))
			if !errors.Is(err, tool.ErrArgs) {
				t.Fatalf("%s %.60s = %q, %v; want an error matching tool.ErrArgs", tt.tool, tt.args, out, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: error %q, want it to contain %q", tt.tool, err, tt.want)
			}
			if v := tl.(tool.Validator).Validate(json.RawMessage(tt.args)); v == nil || v.Error() != err.Error() {
				t.Errorf("Validate says %v, Run says %v: they must agree", v, err)
			}
			if got := s.Todos(); len(got) != len(before) || got[0] != before[0] {
				t.Errorf("a rejected call changed the list: %+v", got)
			}
			if s.Notes() != notes || asked {
				t.Errorf("a rejected call changed the notes or asked: notes %q, asked %v", s.Notes(), asked)
			}
		})
	}
}
