package plan_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/plan"
)

// reach adds item id and moves it to st by a legal path.
func reach(t *testing.T, s *plan.Session, id string, st plan.Status) {
	t.Helper()
	must(t, s, "todo_append", fmt.Sprintf(`{"items":[{"id":%q,"title":"step %s"}]}`, id, id))
	path := map[plan.Status][]plan.Status{
		plan.Pending:    nil,
		plan.InProgress: {plan.InProgress},
		plan.Done:       {plan.InProgress, plan.Done},
		plan.Cancelled:  {plan.Cancelled},
		plan.Failed:     {plan.InProgress, plan.Failed},
	}[st]
	for _, p := range path {
		must(t, s, "todo_update", fmt.Sprintf(`{"id":%q,"status":%q}`, id, p))
	}
}

func setStatus(id string, st plan.Status) string {
	return fmt.Sprintf(`{"id":%q,"status":%q}`, id, st)
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	// The whole table, written out: every pair not listed is refused.
	legal := map[[2]plan.Status]bool{
		{plan.Pending, plan.Pending}:       true,
		{plan.Pending, plan.InProgress}:    true,
		{plan.Pending, plan.Done}:          true,
		{plan.Pending, plan.Cancelled}:     true,
		{plan.InProgress, plan.Pending}:    true,
		{plan.InProgress, plan.InProgress}: true,
		{plan.InProgress, plan.Done}:       true,
		{plan.InProgress, plan.Cancelled}:  true,
		{plan.InProgress, plan.Failed}:     true,
		{plan.Failed, plan.InProgress}:     true,
		{plan.Failed, plan.Failed}:         true,
		{plan.Failed, plan.Cancelled}:      true,
	}
	for _, from := range plan.Statuses() {
		for _, to := range plan.Statuses() {
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				t.Parallel()
				s := plan.New()
				reach(t, s, "a", from)
				out, err := call(t, s, "todo_update", fmt.Sprintf(`{"id":"a","status":%q,"note":"n"}`, to))
				got := s.Todos()[0]
				switch {
				case legal[[2]plan.Status{from, to}]:
					if err != nil {
						t.Fatalf("%s -> %s refused: %v", from, to, err)
					}
					if got.Status != to || got.Note != "n" {
						t.Errorf("after %s -> %s the item is %+v", from, to, got)
					}
					if !strings.HasPrefix(out, "a") {
						t.Errorf("result %q does not name the item", out)
					}
				case from.Final():
					if !errors.Is(err, plan.ErrFinal) || !strings.Contains(err.Error(), "cannot change") {
						t.Fatalf("%s -> %s: error %v, want ErrFinal", from, to, err)
					}
				default:
					if !errors.Is(err, plan.ErrTransition) {
						t.Fatalf("%s -> %s: error %v, want ErrTransition", from, to, err)
					}
					if !strings.Contains(err.Error(), "not "+string(to)) {
						t.Errorf("error %q does not name the refused status", err)
					}
				}
				if err != nil {
					if errors.Is(err, tool.ErrArgs) {
						t.Errorf("a state error must not look like bad arguments: %v", err)
					}
					if got.Status != from || got.Note != "" {
						t.Errorf("a refused update changed the item: %+v", got)
					}
				}
			})
		}
	}
}

func TestOneInProgress(t *testing.T) {
	t.Parallel()
	type step struct {
		args    string
		wantErr error
		want    string // substring of the result or error
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"second start refused", []step{
			{setStatus("a", plan.InProgress), nil, "a: pending -> in_progress"},
			{setStatus("b", plan.InProgress), plan.ErrBusy, "finish or fail a first"},
		}},
		{"start after done", []step{
			{setStatus("a", plan.InProgress), nil, ""},
			{setStatus("a", plan.Done), nil, ""},
			{setStatus("b", plan.InProgress), nil, "b: pending -> in_progress"},
		}},
		{"start after failed", []step{
			{setStatus("a", plan.InProgress), nil, ""},
			{setStatus("a", plan.Failed), nil, ""},
			{setStatus("b", plan.InProgress), nil, ""},
		}},
		{"start after cancelled", []step{
			{setStatus("a", plan.InProgress), nil, ""},
			{setStatus("a", plan.Cancelled), nil, ""},
			{setStatus("b", plan.InProgress), nil, ""},
		}},
		{"start after put back", []step{
			{setStatus("a", plan.InProgress), nil, ""},
			{setStatus("a", plan.Pending), nil, ""},
			{setStatus("b", plan.InProgress), nil, ""},
			{setStatus("a", plan.InProgress), plan.ErrBusy, "finish or fail b first"},
		}},
		{"note on the one in progress", []step{
			{setStatus("a", plan.InProgress), nil, ""},
			{`{"id":"a","status":"in_progress","note":"half way"}`, nil, "a stays in_progress; note updated."},
		}},
		{"others may finish meanwhile", []step{
			{setStatus("a", plan.InProgress), nil, ""},
			{setStatus("b", plan.Done), nil, ""},
			{setStatus("c", plan.Cancelled), nil, ""},
		}},
		{"retry refused while busy, not counted", []step{
			{setStatus("a", plan.InProgress), nil, ""},
			{setStatus("a", plan.Failed), nil, ""},
			{setStatus("b", plan.InProgress), nil, ""},
			{setStatus("a", plan.InProgress), plan.ErrBusy, "finish or fail b first"},
			{setStatus("b", plan.Done), nil, ""},
			{setStatus("a", plan.InProgress), nil, "retry 1 of 3"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := plan.New()
			must(t, s, "todo_append", `{"items":[{"id":"a","title":"A"},{"id":"b","title":"B"},{"id":"c","title":"C"}]}`)
			for _, st := range tt.steps {
				out, err := call(t, s, "todo_update", st.args)
				if !errors.Is(err, st.wantErr) || (err == nil) != (st.wantErr == nil) {
					t.Fatalf("todo_update %s = %q, %v; want error %v", st.args, out, err, st.wantErr)
				}
				text := out
				if err != nil {
					text = err.Error()
				}
				if !strings.Contains(text, st.want) {
					t.Errorf("todo_update %s: %q, want it to contain %q", st.args, text, st.want)
				}
				n := 0
				for _, td := range s.Todos() {
					if td.Status == plan.InProgress {
						n++
					}
				}
				if n > 1 {
					t.Fatalf("after %s, %d items are in progress", st.args, n)
				}
			}
		})
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	escalate := "This is retry 3 of 3: stop retrying, do not try again; tell the user what failed and ask how to proceed"
	type step struct {
		to          plan.Status
		wantErr     error
		want        string // substring of the result or error
		wantRetries int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"three retries then refused", []step{
			{plan.InProgress, nil, "a: pending -> in_progress.", 0},
			{plan.Failed, nil, "a: in_progress -> failed.", 0},
			{plan.InProgress, nil, "This is retry 1 of 3.", 1},
			{plan.Failed, nil, "", 1},
			{plan.InProgress, nil, "This is retry 2 of 3.", 2},
			{plan.Failed, nil, "", 2},
			{plan.InProgress, nil, escalate, 3},
			{plan.Failed, nil, "", 3},
			{plan.InProgress, plan.ErrRetryLimit, "Do not retry it again: tell the user what failed and ask how to proceed", 3},
			{plan.InProgress, plan.ErrRetryLimit, "", 3},
			{plan.Cancelled, nil, "a: failed -> cancelled.", 3},
		}},
		{"done at the third retry", []step{
			{plan.InProgress, nil, "", 0},
			{plan.Failed, nil, "", 0},
			{plan.InProgress, nil, "", 1},
			{plan.Failed, nil, "", 1},
			{plan.InProgress, nil, "", 2},
			{plan.Failed, nil, "", 2},
			{plan.InProgress, nil, escalate, 3},
			{plan.Done, nil, "a: in_progress -> done.", 3},
		}},
		{"putting back does not count", []step{
			{plan.InProgress, nil, "", 0},
			{plan.Pending, nil, "", 0},
			{plan.InProgress, nil, "", 0},
			{plan.Pending, nil, "", 0},
			{plan.InProgress, nil, "", 0},
			{plan.Failed, nil, "", 0},
			{plan.InProgress, nil, "retry 1 of 3", 1},
		}},
		{"failed cannot be put back to dodge the count", []step{
			{plan.InProgress, nil, "", 0},
			{plan.Failed, nil, "", 0},
			{plan.Pending, plan.ErrTransition, "it can go to in_progress or cancelled, not pending", 0},
			{plan.Done, plan.ErrTransition, "not done", 0},
			{plan.Failed, nil, "a stays failed.", 0},
			{plan.InProgress, nil, "retry 1 of 3", 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := plan.New()
			must(t, s, "todo_append", `{"items":[{"id":"a","title":"flaky step"}]}`)
			for i, st := range tt.steps {
				before := s.Todos()[0]
				out, err := call(t, s, "todo_update", setStatus("a", st.to))
				if !errors.Is(err, st.wantErr) || (err == nil) != (st.wantErr == nil) {
					t.Fatalf("step %d (-> %s) = %q, %v; want error %v", i, st.to, out, err, st.wantErr)
				}
				text := out
				if err != nil {
					text = err.Error()
					if got := s.Todos()[0]; got != before {
						t.Errorf("step %d: a refused update changed the item from %+v to %+v", i, before, got)
					}
				}
				if !strings.Contains(text, st.want) {
					t.Errorf("step %d (-> %s): %q, want it to contain %q", i, st.to, text, st.want)
				}
				if strings.Contains(text, "stop retrying") != (st.want == escalate) {
					t.Errorf("step %d (-> %s): %q: the escalation must come exactly at retry %d", i, st.to, text, plan.MaxRetries)
				}
				if got := s.Todos()[0].Retries; got != st.wantRetries {
					t.Errorf("step %d (-> %s): Retries = %d, want %d", i, st.to, got, st.wantRetries)
				}
			}
		})
	}
}

func TestAppend(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     string
		wantErr  error
		want     []string // substrings of the result or error
		wantIDs  []string // the list afterwards, after the existing "a" and "b"
		wantArgs bool     // the error is also tool.ErrArgs
	}{
		{"one", `{"items":[{"id":"c","title":"C"}]}`, nil, []string{"Added 1 pending item(s): c.", "3 item(s)"}, []string{"c"}, false},
		{"several", `{"items":[{"id":"c","title":"C"},{"id":"d.1","title":"D"},{"id":"E_2-x","title":"E"}]}`, nil,
			[]string{"c, d.1, E_2-x"}, []string{"c", "d.1", "E_2-x"}, false},
		{"ids are case-sensitive", `{"items":[{"id":"A","title":"big a"}]}`, nil, nil, []string{"A"}, false},
		{"existing id", `{"items":[{"id":"c","title":"C"},{"id":"a","title":"again"}]}`, plan.ErrDuplicateID,
			[]string{`"a" already in the list`, "nothing was added"}, nil, false},
		{"two existing ids", `{"items":[{"id":"b","title":"B"},{"id":"a","title":"A"}]}`, plan.ErrDuplicateID,
			[]string{`"b", "a" already in the list`}, nil, false},
		{"twice in the call", `{"items":[{"id":"c","title":"C"},{"id":"c","title":"C again"}]}`, plan.ErrDuplicateID,
			[]string{`"c" given more than once`}, nil, true},
		{"three times in the call", `{"items":[{"id":"c","title":"1"},{"id":"c","title":"2"},{"id":"d","title":"3"},{"id":"d","title":"4"},{"id":"c","title":"5"}]}`,
			plan.ErrDuplicateID, []string{`"c", "d" given more than once`}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := plan.New()
			must(t, s, "todo_append", `{"items":[{"id":"a","title":"A"},{"id":"b","title":"B"}]}`)
			out, err := call(t, s, "todo_append", tt.args)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("todo_append %s = %q, %v; want error %v", tt.args, out, err, tt.wantErr)
			}
			if err != nil && errors.Is(err, tool.ErrArgs) != tt.wantArgs {
				t.Errorf("errors.Is(%v, tool.ErrArgs) = %v, want %v", err, !tt.wantArgs, tt.wantArgs)
			}
			text := out
			if err != nil {
				text = err.Error()
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q, want it to contain %q", text, w)
				}
			}
			var ids []string
			for _, td := range s.Todos()[2:] {
				ids = append(ids, td.ID)
				if td.Status != plan.Pending || td.Retries != 0 || td.Note != "" {
					t.Errorf("new item %+v is not a fresh pending item", td)
				}
			}
			if strings.Join(ids, " ") != strings.Join(tt.wantIDs, " ") {
				t.Errorf("added %v, want %v", ids, tt.wantIDs)
			}
		})
	}
}

func TestListFull(t *testing.T) {
	t.Parallel()
	s := plan.New()
	batch := func(from, n int) string {
		var items []string
		for i := range n {
			items = append(items, fmt.Sprintf(`{"id":"t%d","title":"step %d"}`, from+i, from+i))
		}
		return `{"items":[` + strings.Join(items, ",") + `]}`
	}
	for i := 0; i < plan.MaxTodos; i += plan.MaxAppend {
		must(t, s, "todo_append", batch(i, plan.MaxAppend))
	}
	_, err := call(t, s, "todo_append", batch(plan.MaxTodos, 1))
	if !errors.Is(err, plan.ErrListFull) {
		t.Fatalf("item %d: error %v, want ErrListFull", plan.MaxTodos+1, err)
	}
	if n := len(s.Todos()); n != plan.MaxTodos {
		t.Errorf("the list has %d items, want %d", n, plan.MaxTodos)
	}
}

func TestUnknownID(t *testing.T) {
	t.Parallel()
	s := plan.New()
	_, err := call(t, s, "todo_update", setStatus("a", plan.Done))
	if !errors.Is(err, plan.ErrUnknownID) || !strings.Contains(err.Error(), "the list is empty") {
		t.Errorf("update on an empty list: %v, want ErrUnknownID saying the list is empty", err)
	}
	must(t, s, "todo_append", `{"items":[{"id":"fetch","title":"F"},{"id":"sum","title":"S"}]}`)
	for _, id := range []string{"Fetch", "fetc", "fetch.", "x"} {
		_, err := call(t, s, "todo_update", setStatus(id, plan.Done))
		if !errors.Is(err, plan.ErrUnknownID) {
			t.Fatalf("update %q: %v, want ErrUnknownID", id, err)
		}
		if want := fmt.Sprintf("there is no item %q. The ids are: fetch, sum", id); !strings.Contains(err.Error(), want) {
			t.Errorf("update %q: %q, want it to contain %q", id, err, want)
		}
	}
	for _, td := range s.Todos() {
		if td.Status != plan.Pending {
			t.Errorf("an update to an unknown id changed %+v", td)
		}
	}
}

func TestListGolden(t *testing.T) {
	t.Parallel()
	s := plan.New()
	if got := must(t, s, "todo_list", `{}`); !strings.Contains(got, "empty") {
		t.Errorf("empty list = %q", got)
	}
	must(t, s, "todo_append", `{"items":[{"id":"read","title":"Read shopping.txt"},{"id":"sum","title":"Add up the prices"},`+
		`{"id":"mail","title":"Mail the total to the boss"},{"id":"tidy","title":"Tidy up"},{"id":"check","title":"Check the total"}]}`)
	must(t, s, "todo_update", `{"id":"read","status":"in_progress"}`)
	must(t, s, "todo_update", `{"id":"read","status":"done","note":"two chunks, 7 lines"}`)
	must(t, s, "todo_update", `{"id":"sum","status":"in_progress"}`)
	must(t, s, "todo_update", `{"id":"sum","status":"failed","note":"calc refused \"1,000\""}`)
	must(t, s, "todo_update", `{"id":"sum","status":"in_progress"}`)
	must(t, s, "todo_update", `{"id":"tidy","status":"cancelled"}`)
	golden(t, "todo_list.golden", must(t, s, "todo_list", ``))
}
