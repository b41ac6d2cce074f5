// Package plan gives a model the tools to plan its own work within one
// session: a scratchpad for notes (scratchpad_read, scratchpad_write), a todo
// list with a small state machine and a retry limit (todo_append, todo_list,
// todo_update), and ask_question, which puts a question to the human through
// an approve.Asker.
//
// A Session holds one session's notes and list in memory and is safe for
// concurrent use. The todo list enforces a few rules that keep a model from
// wandering: one item in progress at a time, done and cancelled items are
// final, and an item that fails may be retried at most MaxRetries times,
// after which the model is told to stop and escalate to the user.
//
// It will not persist anything, share state between sessions, or decide
// whether a tool may run; the planning tools are classed read-only because
// they change nothing outside the session's own notes.
package plan

import (
	"errors"
	"slices"
	"sync"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/tool"
)

// Limits of a session's notes and list.
const (
	// MaxScratchpad is the most the scratchpad may hold, in bytes.
	MaxScratchpad = 64 << 10
	// MaxRetries is how many times a failed item may be started again.
	MaxRetries = 3
	// MaxTodos is the most items the list may hold, cancelled and done included.
	MaxTodos = 200
	// MaxAppend is the most items one todo_append call may add.
	MaxAppend = 50
	// MaxTitle and MaxNote bound an item's title and note, in characters.
	MaxTitle = 500
	MaxNote  = 2000
	// MaxQuestion bounds ask_question's question, in characters.
	MaxQuestion = 2000
)

// Errors the planning tools return; their messages tell the model what to do.
var (
	ErrTooLarge    = errors.New("the scratchpad is full")
	ErrDuplicateID = errors.New("duplicate todo id")
	ErrListFull    = errors.New("the todo list is full")
	ErrUnknownID   = errors.New("no todo item has that id")
	ErrFinal       = errors.New("the item is final")
	ErrTransition  = errors.New("the status change is not allowed")
	ErrBusy        = errors.New("another item is in progress")
	ErrRetryLimit  = errors.New("the retry limit is reached")
)

// Status is where a todo item stands.
type Status string

// The statuses. Done and Cancelled are final.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Done       Status = "done"
	Cancelled  Status = "cancelled"
	Failed     Status = "failed"
)

// Statuses returns every status, in the order lists and counts use.
func Statuses() []Status { return []Status{Pending, InProgress, Done, Cancelled, Failed} }

// Final reports whether an item in this status can no longer change.
func (s Status) Final() bool { return s == Done || s == Cancelled }

// Todo is one item of the list.
type Todo struct {
	ID     string
	Title  string
	Status Status
	// Retries counts the times the item went from failed back to in_progress.
	Retries int
	Note    string
}

// Session is one session's scratchpad and todo list. The zero value is not
// ready; use New.
type Session struct {
	mu    sync.Mutex
	notes string
	todos []Todo
	index map[string]int // id -> position in todos
}

// New returns an empty session.
func New() *Session { return &Session{index: make(map[string]int)} }

// Todos returns a snapshot of the list, in the order items were added.
func (s *Session) Todos() []Todo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.todos)
}

// Notes returns the scratchpad's content.
func (s *Session) Notes() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notes
}

// Tools returns the planning tools bound to s: scratchpad_read,
// scratchpad_write, todo_append, todo_list, todo_update and ask_question.
// ask_question asks asker; a nil asker leaves every question unanswered.
func (s *Session) Tools(asker approve.Asker) []tool.Tool {
	if asker == nil {
		asker = approve.Unanswered{}
	}
	return []tool.Tool{
		s.scratchpadRead(),
		s.scratchpadWrite(),
		s.todoAppend(),
		s.todoList(),
		s.todoUpdate(),
		askQuestion(asker),
	}
}
