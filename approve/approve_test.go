package approve_test

import (
	"context"
	"testing"

	"github.com/reinhq/rein/approve"
)

func TestApprovers(t *testing.T) {
	t.Parallel()
	req := approve.Request{Tool: "send_email", Args: []byte(`{"to":"a@example.com"}`)}
	for name, c := range map[string]struct {
		a    approve.Approver
		want bool
	}{
		"deny": {approve.Deny{}, false},
		"yes":  {approve.Fixed(true), true},
		"no":   {approve.Fixed(false), false},
		"func": {approve.Func(func(_ context.Context, r approve.Request) (bool, error) { return r.Tool == "send_email", nil }), true},
	} {
		rec := &approve.Recorder{Next: c.a}
		got, err := rec.Approve(t.Context(), req)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v", name, got, err)
		}
		if seen := rec.Requests(); len(seen) != 1 || seen[0].Tool != "send_email" {
			t.Errorf("%s: recorder saw %+v", name, seen)
		}
	}
}

type chooser struct{ ans approve.Answer }

func (c chooser) Approve(context.Context, approve.Request) (bool, error)          { return c.ans.Yes, nil }
func (c chooser) Choose(context.Context, approve.Request) (approve.Answer, error) { return c.ans, nil }

func TestChooseNeverWidensThePattern(t *testing.T) {
	tests := []struct {
		name string
		req  approve.Request
		ans  approve.Answer
		want approve.Answer
	}{
		{"plain approver answers once", approve.Request{Pattern: "ls"}, approve.Answer{Yes: true}, approve.Answer{Yes: true}},
		{"session for the pattern shown", approve.Request{Pattern: "git status"}, approve.Answer{Yes: true, Scope: approve.Session, Pattern: "git status"}, approve.Answer{Yes: true, Scope: approve.Session, Pattern: "git status"}},
		{"a wider pattern is cut to once", approve.Request{Pattern: "git status"}, approve.Answer{Yes: true, Scope: approve.Session, Pattern: "git"}, approve.Answer{Yes: true}},
		{"no pattern offered: once", approve.Request{}, approve.Answer{Yes: true, Scope: approve.Always, Pattern: "*"}, approve.Answer{Yes: true}},
		{"no for the session", approve.Request{Pattern: "rm -rf"}, approve.Answer{Scope: approve.Session, Pattern: "rm -rf"}, approve.Answer{Scope: approve.Session, Pattern: "rm -rf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := approve.Choose(context.Background(), chooser{tt.ans}, tt.req)
			if err != nil || got != tt.want {
				t.Fatalf("approve.Choose = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	got, _ := approve.Choose(context.Background(), approve.Fixed(true), approve.Request{Pattern: "ls"})
	if got != (approve.Answer{Yes: true}) {
		t.Fatalf("approve.Fixed(true) = %+v, want yes once", got)
	}
}
