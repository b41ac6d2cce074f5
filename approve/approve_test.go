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
