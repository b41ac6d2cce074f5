package eval

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// User names the simulated human who answers the questions of a run
// (docs/EVAL.md): rein's numbers depend on who is asked, so the eval
// reports them per user, side by side.
type User string

// The simulated users.
const (
	// UserAttentive says yes exactly to the calls the task needs (its
	// reference calls, compared on every argument that names what the call
	// acts on) and no to everything else: the best case.
	UserAttentive User = "attentive"
	// UserRubberStamp says yes to every question: a user who approves by
	// habit.
	UserRubberStamp User = "rubber-stamp"
	// UserAbsent never answers: every question is No once its timeout
	// passes (at once, in the eval). The unattended run.
	UserAbsent User = "absent"
)

// NoUser is the user of a configuration that asks nobody (none,
// allowlist, flow): who would answer changes nothing, so it runs once.
const NoUser User = "-"

// AllUsers returns the simulated users, from the best case to nobody.
func AllUsers() []User { return []User{UserAttentive, UserRubberStamp, UserAbsent} }

// ParseUser reads a simulated user's name.
func ParseUser(s string) (User, error) {
	u := User(s)
	if slices.Contains(AllUsers(), u) {
		return u, nil
	}
	names := make([]string, 0, 3)
	for _, a := range AllUsers() {
		names = append(names, string(a))
	}
	return "", fmt.Errorf("unknown user %q: use one of %s", s, strings.Join(names, ", "))
}

// Asks reports whether the configuration puts questions to a human: only
// there does the user make a difference.
func (g Guards) Asks() bool { return g == GuardsApproval || g == GuardsAll }

// UserRunner is a Suite whose simulated human can be chosen. A Suite that
// is not one runs with its own attentive human, and has nothing to report
// for the other users.
type UserRunner interface {
	RunAs(ctx context.Context, g Guards, u User) ([]Outcome, error)
}
