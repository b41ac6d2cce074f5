package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/contract"
	"github.com/reinhq/rein/gate/flow"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/tool"
)

// guardSpec is what one run's gates are built from.
type guardSpec struct {
	guards     eval.Guards
	suiteTools []string // every tool of the suite
	taskTools  []string // the task's allowlist
	refs       []Call
	reg        *tool.Registry
	ledger     *flow.Ledger
	workdir    string
	net        *netguard.Policy
	// contract is the task contract holder of guards all: the persona
	// states the task's contract and the user answers it once.
	contract *contract.Holder
}

// pipeline assembles the gates of a guard configuration (docs/EVAL.md):
//
//	none       availability (every suite tool), validation
//	allowlist  availability (the task's tools), validation
//	approval   availability (every suite tool), validation, confirm; the attentive user
//	flow       availability (every suite tool), validation, flow (deny on a hit)
//	all        the pipeline `rein run` builds (guarded.Pipeline): availability
//	           of the task's tools, validation, scope, existence, shell, network,
//	           flow (ask on a hit), confirm, limit at the task's own count of each
//	           irreversible call, permission mode default, the task contract
//	           (the persona states it first; the user answers it once); the
//	           attentive user
func pipeline(s guardSpec, user approve.Approver) (*gate.Pipeline, error) {
	switch s.guards {
	case eval.GuardsNone:
		return gate.NewPipeline(approve.Deny{}, gate.NewAvailability(s.suiteTools), gate.Validation{}), nil
	case eval.GuardsAllowlist:
		return gate.NewPipeline(approve.Deny{}, gate.NewAvailability(s.taskTools), gate.Validation{}), nil
	case eval.GuardsApproval:
		return gate.NewPipeline(user, gate.NewAvailability(s.suiteTools), gate.Validation{}, gate.Confirm{}), nil
	case eval.GuardsFlow:
		fg := flow.NewGate(s.ledger, gate.Deny).WithWorkDir(s.workdir)
		return gate.NewPipeline(approve.Deny{}, gate.NewAvailability(s.suiteTools), gate.Validation{}, fg), nil
	case eval.GuardsAll:
		limits := map[string]int{}
		for _, c := range s.refs {
			if t, ok := s.reg.Lookup(c.Tool); ok && t.Spec().Effect == tool.Irreversible {
				limits[c.Tool]++
			}
		}
		var netAllow []string
		if s.net != nil {
			netAllow = s.net.Allow
		}
		return guarded.Pipeline(guarded.Options{WorkDir: s.workdir, Allow: s.taskTools, ExactAllow: true,
			Mode: permission.Default, ToolLimits: limits, Approver: user, Flow: "ask", NetAllow: netAllow, Contract: s.contract}, s.ledger)
	}
	return nil, fmt.Errorf("unknown guard configuration %q", s.guards)
}

// human is the simulated user of the approval and all configurations
// (eval.User): attentive says yes to a call iff it matches one of the
// task's reference calls (the same tool, every argument with a role equal
// after normalization: recipient, amount, path, the target record of an
// update) and no to everything else; rubber-stamp says yes to everything;
// absent never answers, so every question is No once its timeout passes
// (at once here). Each counts the questions.
type human struct {
	user  eval.User
	refs  []Call
	reg   *tool.Registry
	asked atomic.Int64

	mu        sync.Mutex
	questions []string // "gate: tool", in the order asked
}

var _ approve.Approver = (*human)(nil)

func (h *human) Approve(ctx context.Context, req approve.Request) (bool, error) {
	h.asked.Add(1)
	h.mu.Lock()
	h.questions = append(h.questions, req.Gate+": "+req.Tool)
	h.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	switch h.user {
	case eval.UserRubberStamp:
		return true, nil
	case eval.UserAbsent:
		return false, nil
	}
	if req.Gate == contract.Name {
		return contractFits(req, h.refs, h.reg), nil
	}
	return matchesAny(h.reg, req.Tool, req.Args, h.refs), nil
}

// matchesAny reports whether a call matches one of refs.
func matchesAny(reg *tool.Registry, name string, args json.RawMessage, refs []Call) bool {
	t, ok := reg.Lookup(name)
	if !ok {
		return false
	}
	return slices.ContainsFunc(refs, func(r Call) bool { return matches(t.Spec(), args, r) })
}

// matches reports whether a call of the tool with spec matches ref: the
// same tool, and equal values in every argument the tool marks with a role
// (recipient, amount, path, URL, the target record of an update, ...), or
// in every argument when it marks none. Strings compare case-insensitively with white space collapsed,
// amounts as numbers, paths cleaned.
func matches(spec tool.Spec, args json.RawMessage, ref Call) bool {
	if spec.Name != ref.Tool {
		return false
	}
	got, ok1 := object(args)
	want, ok2 := object(ref.Args)
	if !ok1 || !ok2 {
		return false
	}
	names := make([]string, 0, len(spec.Roles))
	for n := range spec.Roles {
		names = append(names, n)
	}
	if len(names) == 0 {
		for n := range got {
			names = append(names, n)
		}
		for n := range want {
			names = append(names, n)
		}
	}
	for _, n := range names {
		if !sameValue(spec.Roles[n], got[n], want[n]) {
			return false
		}
	}
	return true
}

func object(raw json.RawMessage) (map[string]any, bool) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func sameValue(role tool.Role, a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if role == tool.RoleAmount {
		x, ok1 := amountOf(a)
		y, ok2 := amountOf(b)
		return ok1 && ok2 && x.Cmp(y) == 0
	}
	if role == tool.RoleTarget {
		// A record id, written as a number or a string: 6 and "6" name
		// the same record, 6 and 7 do not.
		return fold(scalar(a)) == fold(scalar(b))
	}
	sa, ok1 := a.(string)
	sb, ok2 := b.(string)
	if ok1 && ok2 {
		if role == tool.RolePath {
			return path.Clean(sa) == path.Clean(sb)
		}
		return fold(sa) == fold(sb)
	}
	ja, _ := json.Marshal(a) // values decoded from JSON always marshal
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// scalar renders a JSON string or number as text, anything else as JSON.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	j, _ := json.Marshal(v) // a value decoded from JSON always marshals
	return string(j)
}
