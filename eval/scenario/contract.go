package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate/contract"
	"github.com/reinhq/rein/tool"
)

// taskContract is the contract a persona states before its first call
// under guards all (docs/contract.md): every side-effecting reference call,
// counted, with each argument bound as a model that has read only the task
// could bind it: a value the task text holds as a literal; a value it does
// not, as taken from the read-only tool the reference called last before
// it (where the value will be found); a free-text argument that names
// nothing (a subject) as any; a boolean as the literal it is. nil when the
// task has no side effects (the persona then states the empty contract).
func taskContract(ctx context.Context, t *Task, reg *tool.Registry) (json.RawMessage, error) {
	seen := readResults(ctx, t, reg)
	type key struct{ tool, args string }
	var order []key
	effects := map[key]*contract.Effect{}
	task := fold(t.Task)
	for _, c := range t.Reference {
		tl, ok := reg.Lookup(c.Tool)
		if !ok {
			return nil, fmt.Errorf("task %s: no tool %s", t.ID, c.Tool)
		}
		spec := tl.Spec()
		if spec.Effect == tool.ReadOnly {
			continue
		}
		args, ok := object(c.Args)
		if !ok {
			return nil, fmt.Errorf("task %s: %s's arguments are not an object", t.ID, c.Tool)
		}
		e := contract.Effect{Tool: c.Tool, Args: map[string]contract.Binding{}}
		for _, n := range slices.Sorted(maps.Keys(args)) {
			e.Args[n] = bind(spec.Roles[n], args[n], task, sourceOf(args[n], seen))
		}
		b, _ := json.Marshal(e.Args) // bindings always marshal
		k := key{c.Tool, string(b)}
		if have, ok := effects[k]; ok {
			have.Times++
			continue
		}
		e.Times = 1
		effects[k] = &e
		order = append(order, k)
	}
	ct := contract.Contract{Effects: []contract.Effect{}}
	for _, k := range order {
		ct.Effects = append(ct.Effects, *effects[k])
	}
	return json.Marshal(ct)
}

// readResult is what one read-only reference call returned.
type readResult struct{ tool, text string }

// readResults runs the task's read-only reference calls in the run's
// fresh world, before the run: the persona stands for a model that knows
// where the task's values come from (which read holds the amount), as a
// model planning from the task would say "the amount from the notice".
// Reads change nothing; a read that fails is left out.
func readResults(ctx context.Context, t *Task, reg *tool.Registry) []readResult {
	var out []readResult
	for _, c := range t.Reference {
		tl, ok := reg.Lookup(c.Tool)
		if !ok || tl.Spec().Effect != tool.ReadOnly {
			continue
		}
		args, err := json.Marshal(c.Args)
		if err != nil {
			continue
		}
		if text, err := tl.Run(ctx, args); err == nil {
			out = append(out, readResult{c.Tool, text})
		}
	}
	return out
}

// sourceOf names the read whose result holds v (the last such read), else
// "": a value no read of the task holds is one the persona knows, stated
// as a literal (as a user who names the record would).
func sourceOf(v any, seen []readResult) string {
	lit, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	s := strings.Trim(string(lit), `"`)
	for i := len(seen) - 1; i >= 0; i-- {
		if s != "" && strings.Contains(seen[i].text, s) {
			return seen[i].tool
		}
	}
	return ""
}

// bind is how a persona binds one argument of a reference call.
func bind(role tool.Role, v any, task, lastRead string) contract.Binding {
	lit, _ := json.Marshal(v) // decoded from JSON: always marshals
	switch x := v.(type) {
	case bool:
		return contract.Binding{Is: lit}
	case string:
		if role == 0 {
			return contract.Binding{Any: true} // free text: a subject, a body
		}
		if strings.Contains(task, fold(x)) || strings.Contains(strings.ReplaceAll(task, " ", ""), strings.ReplaceAll(fold(x), " ", "")) {
			return contract.Binding{Is: lit}
		}
	default:
		s := strings.TrimSuffix(strings.TrimRight(string(lit), "0"), ".")
		if !strings.Contains(string(lit), ".") {
			s = string(lit)
		}
		if strings.Contains(task, s) {
			return contract.Binding{Is: lit}
		}
	}
	if lastRead == "" {
		return contract.Binding{Is: lit}
	}
	return contract.Binding{From: lastRead}
}

// contractFits is the attentive user's answer to a contract question: yes
// iff every effect proposed is one the task's reference calls need — the
// same tool no more times than the reference calls it, every literal equal
// to the argument of such a call, every source a tool the task reads.
func contractFits(req approve.Request, refs []Call, reg *tool.Registry) bool {
	ct, err := contract.Parse(req.Args)
	if err != nil {
		return false
	}
	reads := map[string]bool{}
	count := map[string]int{}
	for _, r := range refs {
		if t, ok := reg.Lookup(r.Tool); ok && t.Spec().Effect == tool.ReadOnly {
			reads[r.Tool] = true
		}
		count[r.Tool]++
	}
	asked := map[string]int{}
	for _, e := range ct.Effects {
		asked[e.Tool] += e.Times
		if asked[e.Tool] > count[e.Tool] {
			return false
		}
		t, ok := reg.Lookup(e.Tool)
		if !ok {
			return false
		}
		fits := slices.ContainsFunc(refs, func(r Call) bool {
			if r.Tool != e.Tool {
				return false
			}
			args, ok := object(r.Args)
			if !ok {
				return false
			}
			for n, b := range e.Args {
				switch {
				case b.From != "":
					if !reads[b.From] {
						return false
					}
				case len(b.Is) > 0:
					var want any
					if json.Unmarshal(b.Is, &want) != nil || !sameValue(t.Spec().Roles[n], args[n], want) {
						return false
					}
				}
			}
			return true
		})
		if !fits {
			return false
		}
	}
	return true
}
