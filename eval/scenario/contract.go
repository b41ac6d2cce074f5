package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate/contract"
	"github.com/reinhq/rein/gate/flow"
	"github.com/reinhq/rein/tool"
)

// taskContract is the contract a persona states before its first call
// under guards all (docs/contract.md): every side-effecting reference call,
// counted, with each argument bound as a model that has read only the task
// could bind it: a value the task text holds as a literal, or one it
// computes from numbers the task gives (a calc of the task's own numbers);
// a value it does not, as taken from the read that holds it (where the
// value will be found): precisely — the tool, the resource it reads and
// the label the value stands under, with words of the task that pick the
// record when the read lists several — when that names one value, else
// loosely, as taken from the read-only tool the reference called last
// before it; a free-text argument that names nothing (a subject) as any;
// a boolean as the literal it is. nil when the task has no side effects
// (the persona then states the empty contract).
func taskContract(ctx context.Context, t *Task, reg *tool.Registry) (json.RawMessage, error) {
	seen := readResults(ctx, t, reg)
	where := flow.NewLedger()
	for _, r := range seen {
		where.Read(r.tool, r.args, r.text)
	}
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
			b := bind(spec.Roles[n], args[n], task, sourceOf(args[n], seen))
			if b.From != "" {
				b = pinpoint(args[n], b.From, seen, task, where)
			}
			e.Args[n] = b
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

// pinpoint binds v, found in the results of the tool src, as precisely as
// the reads allow: a value a calc of the task's own numbers gives is a
// literal (the planner computes it); else the field of src's read that
// holds it, of the resource that read names, with the first word of the
// task that picks its record when one is needed; else loosely, from src.
func pinpoint(v any, src string, seen []readResult, task string, l *flow.Ledger) contract.Binding {
	lit, _ := json.Marshal(v) // decoded from JSON: always marshals
	for _, r := range seen {
		if r.tool == "calc" && fromTask(r.args, task) && sourceOf(v, []readResult{r}) != "" {
			return contract.Binding{Is: lit}
		}
	}
	num := any(v)
	if f, ok := v.(float64); ok {
		num = json.Number(strconv.FormatFloat(f, 'f', -1, 64))
	}
	for i := len(seen) - 1; i >= 0; i-- {
		r := seen[i]
		if r.tool != src {
			continue
		}
		of := resource(r.args)
		taskWords := slices.DeleteFunc(strings.FieldsFunc(task, func(r rune) bool { return !unicode.IsLetter(r) }),
			func(w string) bool { return len(w) < 3 })
		for _, label := range l.FieldsHolding(num, src) {
			// The field as the task names it (a word of the task in the
			// label: "rent"), else the whole label.
			var fields []string
			for _, w := range taskWords {
				if slices.Contains(strings.Fields(label), w) {
					fields = append(fields, w)
				}
			}
			for _, field := range append(fields, label) {
				if l.FieldFrom(num, src, of, field, "") {
					return contract.Binding{From: src, Of: of, Field: field}
				}
				for _, w := range taskWords {
					if l.FieldFrom(num, src, of, field, w) {
						return contract.Binding{From: src, Of: of, Field: field, Where: w}
					}
				}
			}
		}
		break
	}
	return contract.Binding{From: src}
}

// resource is the value of a read's first string argument (by name): what
// the read reads (a path, an order id); "" when it has none.
func resource(args json.RawMessage) string {
	m, ok := object(args)
	if !ok {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// fromTask reports whether every number in a call's arguments is written
// in the task.
func fromTask(args json.RawMessage, task string) bool {
	nums := regexp.MustCompile(`\d+(?:[.,]\d+)?`).FindAllString(string(args), -1)
	for _, n := range nums {
		if !strings.Contains(task, n) {
			return false
		}
	}
	return len(nums) > 0
}

// readResult is what one read-only reference call returned.
type readResult struct {
	tool string
	args json.RawMessage
	text string
}

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
			out = append(out, readResult{c.Tool, args, text})
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
					if !reads[b.From] || b.Of != "" && !readsOf(refs, b.From, b.Of) {
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

// readsOf reports whether a reference call of the tool src reads the
// resource of: one of its arguments is of.
func readsOf(refs []Call, src, of string) bool {
	return slices.ContainsFunc(refs, func(r Call) bool {
		if r.Tool != src {
			return false
		}
		args, ok := object(r.Args)
		if !ok {
			return false
		}
		for _, v := range args {
			if s, ok := v.(string); ok && path.Clean(s) == path.Clean(of) {
				return true
			}
		}
		return false
	})
}
