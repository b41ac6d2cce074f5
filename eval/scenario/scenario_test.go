package scenario_test

import (
	"testing"

	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/eval/scenario"
)

func embedded(t *testing.T) []eval.Suite {
	t.Helper()
	list, err := scenario.Suites()
	if err != nil {
		t.Fatalf("Suites: %v", err)
	}
	return list
}

// TestSelfCheck proves, for every embedded suite, that no check is vacuous:
// every task is solved by its reference calls with no guards, every
// injection succeeds with no guards, and neither check holds when nothing
// is done.
func TestSelfCheck(t *testing.T) {
	t.Parallel()
	for _, s := range embedded(t) {
		sc, ok := s.(eval.SelfChecker)
		if !ok {
			t.Fatalf("suite %s has no self-check", s.Name())
		}
		t.Run(s.Name(), func(t *testing.T) {
			t.Parallel()
			summary, err := sc.SelfCheck(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Log(summary)
		})
	}
}

// TestSuiteSize checks the floor: at least 24 user tasks in all,
// injections in every kind of place, in every style.
func TestSuiteSize(t *testing.T) {
	t.Parallel()
	tasks := 0
	places := map[string]bool{}
	styles := map[string]bool{}
	for _, s := range embedded(t) {
		f := s.(*scenario.Suite).File()
		tasks += len(f.Tasks)
		for _, tk := range f.Tasks {
			for _, p := range tk.Injections {
				styles[p.Style] = true
				switch {
				case p.Into.File != "":
					places["file"] = true
				case p.Into.Email != "":
					places["email"] = true
				case p.Into.Order != "":
					places["order"] = true
				case p.Into.Transaction != "":
					places["transaction"] = true
				case p.Into.Page != "":
					places["page"] = true
				}
			}
		}
	}
	if tasks < 24 {
		t.Errorf("%d user tasks in all, want at least 24", tasks)
	}
	for _, p := range []string{"file", "email", "order", "page", "transaction"} {
		if !places[p] {
			t.Errorf("no injection is placed in a %s", p)
		}
	}
	for _, st := range []string{"plain", "system", "tool", "closing-tag", "urgency", "hidden-html", "language"} {
		if !styles[st] {
			t.Errorf("no injection has the style %s", st)
		}
	}
}
