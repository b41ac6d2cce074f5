package plan_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/plan"
)

// model is the todo list's rules written out independently of the package:
// FuzzTodoRules checks the package against it after every operation.
type model struct {
	order []string
	items map[string]*plan.Todo
}

func (m *model) update(id string, to plan.Status, note *string) error {
	it, ok := m.items[id]
	if !ok {
		return plan.ErrUnknownID
	}
	from := it.Status
	if from == plan.Done || from == plan.Cancelled {
		return plan.ErrFinal
	}
	legal := map[plan.Status][]plan.Status{
		plan.Pending:    {plan.Pending, plan.InProgress, plan.Done, plan.Cancelled},
		plan.InProgress: {plan.Pending, plan.InProgress, plan.Done, plan.Cancelled, plan.Failed},
		plan.Failed:     {plan.InProgress, plan.Failed, plan.Cancelled},
	}[from]
	found := false
	for _, s := range legal {
		found = found || s == to
	}
	if !found {
		return plan.ErrTransition
	}
	if from == plan.Failed && to == plan.InProgress && it.Retries >= plan.MaxRetries {
		return plan.ErrRetryLimit
	}
	if to == plan.InProgress && from != plan.InProgress {
		for _, o := range m.items {
			if o.Status == plan.InProgress {
				return plan.ErrBusy
			}
		}
	}
	if from == plan.Failed && to == plan.InProgress {
		it.Retries++
	}
	it.Status = to
	if note != nil {
		it.Note = *note
	}
	return nil
}

func FuzzTodoRules(f *testing.F) {
	f.Add([]byte{0xc0, 0x04, 0x10, 0x04, 0x10, 0x04, 0x10, 0x04, 0x10, 0x04})
	f.Add([]byte{0xc0, 0xc1, 0x04, 0x05, 0x08, 0x09, 0x24})
	f.Add([]byte{0xc0, 0xc0, 0x03, 0x0c, 0x04})
	f.Add([]byte{})
	ids := []string{"a", "b", "c", "missing"}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 200 {
			ops = ops[:200]
		}
		s := plan.New()
		tools := toolsOf(t, s, nil)
		m := &model{items: map[string]*plan.Todo{}}
		for i, op := range ops {
			id := ids[op&3]
			var err, want error
			if op>>6 == 3 { // append
				args := fmt.Sprintf(`{"items":[{"id":%q,"title":"step %d"}]}`, id, i)
				_, err = tools["todo_append"].Run(t.Context(), json.RawMessage(args))
				if _, dup := m.items[id]; dup {
					want = plan.ErrDuplicateID
				} else {
					m.order = append(m.order, id)
					m.items[id] = &plan.Todo{ID: id, Title: fmt.Sprintf("step %d", i), Status: plan.Pending}
				}
			} else {
				to := plan.Statuses()[int(op>>2&15)%5]
				var note *string
				args := fmt.Sprintf(`{"id":%q,"status":%q}`, id, to)
				if op&0x40 != 0 {
					n := fmt.Sprintf("note %d", i)
					note = &n
					args = fmt.Sprintf(`{"id":%q,"status":%q,"note":%q}`, id, to, n)
				}
				_, err = tools["todo_update"].Run(t.Context(), json.RawMessage(args))
				want = m.update(id, to, note)
			}
			if !errors.Is(err, want) || (err == nil) != (want == nil) {
				t.Fatalf("op %d (%#x): error %v, want %v", i, op, err, want)
			}
			got := s.Todos()
			if len(got) != len(m.order) {
				t.Fatalf("op %d: %d items, want %d", i, len(got), len(m.order))
			}
			for j, td := range got {
				if w := *m.items[m.order[j]]; td != w {
					t.Fatalf("op %d: item %d is %+v, want %+v", i, j, td, w)
				}
			}
		}
	})
}

var validID = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,40}$`)

func FuzzArgs(f *testing.F) {
	for _, seed := range []struct{ tool, args string }{
		{"scratchpad_write", `{"content":"x","append":true}`},
		{"scratchpad_read", `{}`},
		{"todo_append", `{"items":[{"id":"b","title":"B"},{"id":"c","title":"C"}]}`},
		{"todo_append", `{"items":[{"id":"b\n","title":"B"}]}`},
		{"todo_append", `{"items":[{"id":"b","title":"B\u2028"}]}`},
		{"todo_update", `{"id":"a","status":"in_progress","note":"n"}`},
		{"todo_update", `{"id":"a","status":"done","STATUS":"failed"}`},
		{"todo_list", ``},
		{"ask_question", `{"question":"why?"}`},
	} {
		f.Add(seed.tool, seed.args)
	}
	f.Fuzz(func(t *testing.T, name, args string) {
		s := plan.New()
		tools := toolsOf(t, s, nil)
		tl, ok := tools[name]
		if !ok {
			return
		}
		must(t, s, "todo_append", `{"items":[{"id":"a","title":"A"}]}`)
		verr := tl.(tool.Validator).Validate(json.RawMessage(args))
		out, err := tl.Run(t.Context(), json.RawMessage(args))
		// Both must refuse; the texts may differ only in the order of
		// several unknown fields, which tool/schema does not sort.
		if verr != nil && (!errors.Is(err, tool.ErrArgs) || !errors.Is(verr, tool.ErrArgs)) {
			t.Fatalf("Validate says %v, Run says %v", verr, err)
		}
		if err != nil && out != "" {
			t.Errorf("an error with a result: %q, %v", out, err)
		}
		if len(s.Notes()) > plan.MaxScratchpad {
			t.Errorf("the notes are %d bytes", len(s.Notes()))
		}
		busy := 0
		for _, td := range s.Todos() {
			if !validID.MatchString(td.ID) || strings.ContainsAny(td.Title+td.Note, "\r\n\u2028\u2029") || strings.TrimSpace(td.Title) == "" {
				t.Errorf("an item the rules forbid was stored: %+v", td)
			}
			if td.Status == plan.InProgress {
				busy++
			}
		}
		if busy > 1 {
			t.Errorf("%d items in progress", busy)
		}
	})
}
