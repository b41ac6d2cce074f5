package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/tool"
)

// idPattern is the form of a todo id, in the schemas.
const idPattern = `^[A-Za-z0-9_.-]{1,40}$`

// idSchema is the JSON Schema of a todo id.
const idSchema = `{"type":"string","minLength":1,"maxLength":40,"pattern":"` + idPattern + `",` +
	`"description":"1 to 40 letters, digits, '_', '.' or '-'"}`

// oneLine reports text that would break the list's layout.
func oneLine(field, s string) error {
	i := strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	})
	if i < 0 {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return fmt.Errorf("%q must be one line of text: it has a line break or control character (%q) at byte %d", field, r, i)
}

// targets returns the statuses an item in status from may move to, from
// itself included (to change only the note). Final statuses have none.
func targets(from Status) []Status {
	switch from {
	case Pending:
		return []Status{Pending, InProgress, Done, Cancelled}
	case InProgress:
		return []Status{Pending, InProgress, Done, Cancelled, Failed}
	case Failed:
		return []Status{InProgress, Failed, Cancelled}
	}
	return nil
}

// newItem is one item of todo_append.
type newItem struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// appendArgs are todo_append's arguments.
type appendArgs struct {
	Items []newItem `json:"items"`
}

// Check rejects titles that are not one line and ids given twice.
func (a *appendArgs) Check() error {
	seen := make(map[string]bool, len(a.Items))
	var twice []string
	for i, it := range a.Items {
		if err := oneLine(fmt.Sprintf("items.%d.title", i), it.Title); err != nil {
			return err
		}
		if strings.TrimSpace(it.Title) == "" {
			return fmt.Errorf(`"items.%d.title" is blank: say what the step is`, i)
		}
		if seen[it.ID] && !slices.Contains(twice, it.ID) {
			twice = append(twice, it.ID)
		}
		seen[it.ID] = true
	}
	if len(twice) > 0 {
		return fmt.Errorf("%w: %s given more than once in this call; every item needs its own id", ErrDuplicateID, quoteList(twice))
	}
	return nil
}

var appendSchema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"items":{"type":"array","minItems":1,"maxItems":%d,"items":{"type":"object","properties":{`+
	`"id":%s,`+
	`"title":{"type":"string","minLength":1,"maxLength":%d,"description":"What the step is, in one line"}},`+
	`"required":["id","title"],"additionalProperties":false}}},`+
	`"required":["items"],"additionalProperties":false}`, MaxAppend, idSchema, MaxTitle))

func (s *Session) todoAppend() tool.Tool {
	return tool.New(tool.Spec{
		Name: "todo_append",
		Description: fmt.Sprintf("Add steps to your todo list for this task. Each item has an id you choose (1 to 40 letters, digits, '_', '.' or '-', "+
			"unique in the list) and a one-line title. New items are pending. Add 1 to %d items per call; the list holds at most %d.",
			MaxAppend, MaxTodos),
		Schema: appendSchema,
		Effect: tool.ReadOnly,
		Echoes: true, // the model's own notes: never a source, never an exemption
	}, func(ctx context.Context, a appendArgs) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		var dup []string
		for _, it := range a.Items {
			if _, ok := s.index[it.ID]; ok {
				dup = append(dup, it.ID)
			}
		}
		if len(dup) > 0 {
			return "", fmt.Errorf("%w: %s already in the list; nothing was added. Choose other ids, or use todo_update to change an item",
				ErrDuplicateID, quoteList(dup))
		}
		if n := len(s.todos) + len(a.Items); n > MaxTodos {
			return "", fmt.Errorf("%w: adding %d items would make %d, and the list holds at most %d; nothing was added. "+
				"Finish the items you have, or make each item a larger step", ErrListFull, len(a.Items), n, MaxTodos)
		}
		ids := make([]string, len(a.Items))
		for i, it := range a.Items {
			s.index[it.ID] = len(s.todos)
			s.todos = append(s.todos, Todo{ID: it.ID, Title: it.Title, Status: Pending})
			ids[i] = it.ID
		}
		return fmt.Sprintf("Added %d pending item(s): %s. The list has %d item(s).", len(ids), strings.Join(ids, ", "), len(s.todos)), nil
	})
}

func (s *Session) todoList() tool.Tool {
	return tool.New(tool.Spec{
		Name: "todo_list",
		Description: "Show your todo list: every item with its id, status, retries and note, and how many items are in each status. " +
			"It takes no arguments.",
		Schema: readSchema,
		Effect: tool.ReadOnly,
		Echoes: true, // the model's own notes: never a source, never an exemption
	}, func(context.Context, readArgs) (string, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return render(s.todos), nil
	})
}

// render lays the list out for the model: a line of counts, then one line
// per item, with its retries and note on indented lines.
func render(todos []Todo) string {
	if len(todos) == 0 {
		return "The todo list is empty. Add steps with todo_append."
	}
	count := make(map[Status]int, 5)
	for _, t := range todos {
		count[t.Status]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d item(s):", len(todos))
	for i, st := range Statuses() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %d %s", count[st], st)
	}
	b.WriteByte('\n')
	for _, t := range todos {
		fmt.Fprintf(&b, "- [%s] %s: %s\n", t.Status, t.ID, t.Title)
		if t.Retries > 0 {
			fmt.Fprintf(&b, "  retries: %d of %d\n", t.Retries, MaxRetries)
		}
		if t.Note != "" {
			fmt.Fprintf(&b, "  note: %s\n", t.Note)
		}
	}
	return b.String()
}

// updateArgs are todo_update's arguments.
type updateArgs struct {
	ID     string  `json:"id"`
	Status Status  `json:"status"`
	Note   *string `json:"note"`
}

// Check keeps notes on one line.
func (a *updateArgs) Check() error {
	if a.Note != nil {
		return oneLine("note", *a.Note)
	}
	return nil
}

var updateSchema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"id":%s,`+
	`"status":{"type":"string","enum":["pending","in_progress","done","cancelled","failed"]},`+
	`"note":{"type":"string","maxLength":%d,"description":"Replaces the item's note; an empty string clears it. One line."}},`+
	`"required":["id","status"],"additionalProperties":false}`, idSchema, MaxNote))

func (s *Session) todoUpdate() tool.Tool {
	return tool.New(tool.Spec{
		Name: "todo_update",
		Description: fmt.Sprintf("Change the status of one todo item, and optionally its note. Rules: only one item may be in_progress at a time; "+
			"done and cancelled are final; pending can go to in_progress, done or cancelled; in_progress to pending, done, failed or cancelled; "+
			"failed to in_progress (a retry) or cancelled. A failed item may be retried at most %d times; after that, stop and tell the user what failed.",
			MaxRetries),
		Schema: updateSchema,
		Effect: tool.ReadOnly,
		Echoes: true, // the model's own notes: never a source, never an exemption
	}, func(ctx context.Context, a updateArgs) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return s.update(a)
	})
}

// update applies one todo_update under the lock.
func (s *Session) update(a updateArgs) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[a.ID]
	if !ok {
		if len(s.todos) == 0 {
			return "", fmt.Errorf("%w: there is no item %q; the list is empty. Add items with todo_append first", ErrUnknownID, a.ID)
		}
		ids := make([]string, len(s.todos))
		for j, t := range s.todos {
			ids[j] = t.ID
		}
		return "", fmt.Errorf("%w: there is no item %q. The ids are: %s", ErrUnknownID, a.ID, strings.Join(ids, ", "))
	}
	t := s.todos[i]
	from, to := t.Status, a.Status
	if from.Final() {
		return "", fmt.Errorf("%w: %s is %s, and done and cancelled items cannot change. "+
			"If more work is needed, add a new item with todo_append", ErrFinal, t.ID, from)
	}
	allowed := targets(from)
	if !slices.Contains(allowed, to) {
		return "", fmt.Errorf("%w: %s is %s; from %s it can go to %s, not %s",
			ErrTransition, t.ID, from, from, orList(allowed, from), to)
	}
	retry := from == Failed && to == InProgress
	if retry && t.Retries >= MaxRetries {
		return "", fmt.Errorf("%w: %s has already been retried %d times, the limit; it stays failed. "+
			"Do not retry it again: tell the user what failed and ask how to proceed, or cancel it",
			ErrRetryLimit, t.ID, t.Retries)
	}
	if to == InProgress && from != InProgress {
		for _, o := range s.todos {
			if o.Status == InProgress {
				return "", fmt.Errorf("%w: %s is in progress; finish or fail %s first (set it to done, failed or cancelled), then start %s",
					ErrBusy, o.ID, o.ID, t.ID)
			}
		}
	}
	t.Status = to
	if retry {
		t.Retries++
	}
	if a.Note != nil {
		t.Note = *a.Note
	}
	s.todos[i] = t

	var b strings.Builder
	if from == to {
		fmt.Fprintf(&b, "%s stays %s", t.ID, to)
	} else {
		fmt.Fprintf(&b, "%s: %s -> %s", t.ID, from, to)
	}
	if a.Note != nil {
		b.WriteString("; note updated")
	}
	b.WriteByte('.')
	if retry {
		if t.Retries >= MaxRetries {
			fmt.Fprintf(&b, " This is retry %d of %d: stop retrying, do not try again; tell the user what failed and ask how to proceed. "+
				"Then mark it failed or cancelled.", t.Retries, MaxRetries)
		} else {
			fmt.Fprintf(&b, " This is retry %d of %d.", t.Retries, MaxRetries)
		}
	}
	return b.String(), nil
}

// orList renders the statuses other than skip as "a, b or c".
func orList(st []Status, skip Status) string {
	var names []string
	for _, s := range st {
		if s != skip {
			names = append(names, string(s))
		}
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
