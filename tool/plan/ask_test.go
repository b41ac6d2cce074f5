package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/tool/plan"
)

func TestAskQuestion(t *testing.T) {
	t.Parallel()
	const q = "Should the reply go to ann@firma.pl or to the whole team?"
	tests := []struct {
		name  string
		asker approve.Asker
		want  string
	}{
		{"answered", askFunc(func(_ context.Context, got string) (string, error) {
			if got != q {
				return "", fmt.Errorf("asked %q, want %q", got, q)
			}
			return "Only to Ann.", nil
		}), "The user answered: Only to Ann."},
		{"unanswered", approve.Unanswered{}, plan.NoAnswer},
		{"nil asker", nil, plan.NoAnswer},
		{"asker error", askFunc(func(context.Context, string) (string, error) {
			return "", errors.New("the terminal is closed")
		}), plan.NoAnswer},
		{"error with an answer", askFunc(func(context.Context, string) (string, error) {
			return "yes", approve.ErrNoAnswer
		}), plan.NoAnswer},
		{"empty answer", askFunc(func(context.Context, string) (string, error) { return "", nil }), plan.NoAnswer},
		{"blank answer", askFunc(func(context.Context, string) (string, error) { return " \n\t", nil }), plan.NoAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tl := toolsOf(t, plan.New(), tt.asker)["ask_question"]
			args, _ := json.Marshal(map[string]string{"question": q})
			out, err := tl.Run(t.Context(), args)
			if err != nil {
				t.Fatalf("ask_question: %v", err)
			}
			if out != tt.want {
				t.Errorf("ask_question = %q, want %q", out, tt.want)
			}
		})
	}
	if !strings.HasPrefix(plan.NoAnswer, "No answer: nobody answered the question. Do not wait for one;") {
		t.Errorf("NoAnswer = %q", plan.NoAnswer)
	}
}

func TestAskCancelled(t *testing.T) {
	t.Parallel()
	t.Run("before asking", func(t *testing.T) {
		t.Parallel()
		asked := false
		tl := toolsOf(t, plan.New(), askFunc(func(context.Context, string) (string, error) {
			asked = true
			return "yes", nil
		}))["ask_question"]
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		out, err := tl.Run(ctx, json.RawMessage(`{"question":"go on?"}`))
		if !errors.Is(err, context.Canceled) || out != "" {
			t.Fatalf("ask_question with a cancelled context = %q, %v; want context.Canceled", out, err)
		}
		if !strings.Contains(err.Error(), "nobody answered") {
			t.Errorf("error %q does not tell the model there is no answer", err)
		}
		if asked {
			t.Error("the asker was bothered with a cancelled question")
		}
	})
	t.Run("while asking", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		tl := toolsOf(t, plan.New(), askFunc(func(ctx context.Context, _ string) (string, error) {
			cancel() // the run is aborted while the human thinks
			<-ctx.Done()
			return "too late", nil
		}))["ask_question"]
		out, err := tl.Run(ctx, json.RawMessage(`{"question":"go on?"}`))
		if !errors.Is(err, context.Canceled) || out != "" {
			t.Fatalf("ask_question cancelled while asking = %q, %v; want context.Canceled and no answer", out, err)
		}
	})
	t.Run("other tools", func(t *testing.T) {
		t.Parallel()
		s := plan.New()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for name, args := range map[string]string{
			"scratchpad_write": `{"content":"x"}`,
			"todo_append":      `{"items":[{"id":"a","title":"A"}]}`,
			"todo_update":      `{"id":"a","status":"done"}`,
		} {
			if _, err := toolsOf(t, s, nil)[name].Run(ctx, json.RawMessage(args)); !errors.Is(err, context.Canceled) {
				t.Errorf("%s with a cancelled context: %v, want context.Canceled", name, err)
			}
		}
		if s.Notes() != "" || len(s.Todos()) != 0 {
			t.Errorf("a cancelled call changed the session: %q, %+v", s.Notes(), s.Todos())
		}
	})
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	const n = 40
	s := plan.New()
	tools := toolsOf(t, s, nil)
	run := func(name, args string) error {
		_, err := tools[name].Run(t.Context(), json.RawMessage(args))
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = errors.Join(
				run("todo_append", fmt.Sprintf(`{"items":[{"id":"t%d","title":"step %d"}]}`, i, i)),
				run("scratchpad_write", fmt.Sprintf(`{"content":"line %d","append":true}`, i)),
				run("todo_list", `{}`),
				run("scratchpad_read", `{}`),
			)
			_ = s.Todos()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := len(s.Todos()); got != n {
		t.Fatalf("%d items, want %d", got, n)
	}
	if got := strings.Count(s.Notes(), "\n") + 1; got != n {
		t.Errorf("the notes have %d lines, want %d: %q", got, n, s.Notes())
	}

	// Every item tries to start at once: exactly one may.
	started := make([]error, n)
	for i := range n {
		wg.Go(func() { started[i] = run("todo_update", fmt.Sprintf(`{"id":"t%d","status":"in_progress"}`, i)) })
	}
	wg.Wait()
	ok := 0
	for i, err := range started {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, plan.ErrBusy):
			t.Errorf("t%d: %v, want nil or ErrBusy", i, err)
		}
	}
	if ok != 1 {
		t.Errorf("%d items started at once, want exactly 1", ok)
	}
	inProgress := 0
	for _, td := range s.Todos() {
		if td.Status == plan.InProgress {
			inProgress++
		}
	}
	if inProgress != 1 {
		t.Errorf("%d items in progress, want 1", inProgress)
	}
}
