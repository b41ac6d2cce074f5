package scenario

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinhq/rein/eval"
)

// SelfCheck proves the suite's checks are not vacuous. With no guards:
// every task's reference calls pass its utility check, and a model that
// does nothing fails it; every injection, carried out, passes its security
// check, and the oracle on the same attacked variant does not; every
// detour fails, so the recovering persona has something to recover from.
// It returns a summary of what it proved, or every failure.
func (s *Suite) SelfCheck(ctx context.Context) (string, error) {
	r, err := s.runner()
	if err != nil {
		return "", err
	}
	defer r.close()
	var fails []error
	fail := func(format string, args ...any) { fails = append(fails, fmt.Errorf(format, args...)) }
	tasks, attacks, detours := 0, 0, 0
	for i := range s.f.Tasks {
		t := &s.f.Tasks[i]
		tasks++
		o, err := r.run(ctx, variant{task: t, persona: eval.PersonaOracle}, eval.GuardsNone, eval.UserAttentive)
		if err != nil {
			return "", err
		}
		if !o.Success {
			fail("task %s: its reference calls do not pass its utility check", t.ID)
		}
		if o.Trouble {
			fail("task %s: a reference call failed or was refused with no guards", t.ID)
		}
		if o.Harm {
			fail("task %s: a reference call counts as harm", t.ID)
		}
		idle, err := r.run(ctx, variant{task: t, persona: personaIdle}, eval.GuardsNone, eval.UserAttentive)
		if err != nil {
			return "", err
		}
		if idle.Success {
			fail("task %s: the utility check passes when nothing is done: it checks nothing", t.ID)
		}
		if len(t.Detour) > 0 {
			detours++
			rec, err := r.run(ctx, variant{task: t, persona: eval.PersonaRecovering}, eval.GuardsNone, eval.UserAttentive)
			if err != nil {
				return "", err
			}
			if !rec.detourFailed {
				fail("task %s: a detour call succeeded with no guards; a detour must fail in every configuration", t.ID)
			}
			if !rec.Success {
				fail("task %s: the recovering persona does not finish the task after its detour", t.ID)
			}
		}
		for j := range t.Injections {
			p := &t.Injections[j]
			attacks++
			atk, err := r.run(ctx, variant{task: t, place: p, persona: eval.PersonaInjectionFirst}, eval.GuardsNone, eval.UserAttentive)
			if err != nil {
				return "", err
			}
			if !atk.AttackSucceeded {
				fail("task %s, injection %s in %s: the attack does not succeed with no guards", t.ID, p.Injection, p.Into)
			}
			ob, err := r.run(ctx, variant{task: t, place: p, persona: eval.PersonaObedient}, eval.GuardsNone, eval.UserAttentive)
			if err != nil {
				return "", err
			}
			if !ob.AttackSucceeded {
				fail("task %s, injection %s in %s: the obedient persona's attack does not succeed with no guards", t.ID, p.Injection, p.Into)
			}
			or, err := r.run(ctx, variant{task: t, place: p, persona: eval.PersonaOracle}, eval.GuardsNone, eval.UserAttentive)
			if err != nil {
				return "", err
			}
			if or.AttackSucceeded {
				fail("task %s, injection %s: the security check is true although no attacker call was made", t.ID, p.Injection)
			}
			if !or.Success {
				fail("task %s, injection %s in %s: the injection breaks the data the task needs", t.ID, p.Injection, p.Into)
			}
		}
	}
	if len(fails) > 0 {
		return "", fmt.Errorf("%w: %w", errSelfCheck, errors.Join(fails...))
	}
	return fmt.Sprintf("%d tasks solved by their reference calls, %d injections succeed unguarded, %d detours fail; no check is true of an untouched environment", tasks, attacks, detours), nil
}
