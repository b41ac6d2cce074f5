package guarded

import (
	"context"
	"io"
	"slices"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/contract"
	"github.com/reinhq/rein/gate/flow"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool"
)

// allowlist is the allowlist of a session built from opts: Allow (nil:
// config.DefaultTools(); none with OnlyTools), plus the names of Tools
// unless ExactAllow.
func allowlist(opts Options) []string {
	allow := opts.Allow
	if allow == nil {
		allow = config.DefaultTools()
	}
	if opts.OnlyTools {
		allow = nil
	}
	allow = slices.Clone(allow)
	if !opts.ExactAllow {
		for _, t := range opts.Tools {
			allow = append(allow, t.Spec().Name)
		}
	}
	return allow
}

// policy is what decides the calls of a session built from opts.
func policy(opts Options, a approve.Approver) harness.Policy {
	h := opts.Contract
	if opts.Unattended {
		if h == nil {
			h = contract.NewHolder(nil)
		}
		h.Require()
		a = approve.Deny{}
	}
	return harness.Policy{Allowed: allowlist(opts), Mode: opts.Mode, Rules: opts.Rules, ToolLimits: opts.ToolLimits,
		Approver: a, Flow: opts.Flow, Protected: opts.Protected, Saver: opts.RuleSaver, Contract: h}
}

// Pipeline returns the gates a session built from opts judges each call
// by, cheapest first: availability (the allowlist New computes),
// validation, scope (over opts.WorkDir), existence, shell, network
// (opts.NetAllow), data flow (unless Flow is "off"), confirm, limit,
// permission, then approval by opts.Approver (nil: no to every ask). The
// data-flow gate judges by ledger, which the caller feeds; nil gives it an
// empty ledger of its own. The intent-drift gate is not in it: it needs
// the session's task, and a session adds it when it runs (unless NoDrift).
//
// Pipeline.Evaluate is the decision before anyone is asked: `rein policy
// check` judges each input line with it; rein's eval runs its "all"
// configuration on it.
func Pipeline(opts Options, ledger *flow.Ledger) (*gate.Pipeline, error) {
	p := policy(opts, opts.Approver)
	p.Provenance = ledger
	if p.Contract != nil {
		reg, err := Tools(opts)
		if err != nil {
			return nil, err
		}
		p.Lookup = reg.Lookup
	}
	return harness.Gates(p, opts.WorkDir, &netguard.Policy{Allow: opts.NetAllow, Domains: opts.NetDomains})
}

// Tools returns the registry of a session built from opts: the built-in
// tools and opts.Tools, every one registered whether or not it is on the
// allowlist. The built-in ones can be named and described (their specs,
// effect classes and argument roles, as the gates judge them) but not run.
func Tools(opts Options) (*tool.Registry, error) {
	return harness.Tools(harness.Env{ReadLines: opts.ReadLines, Extra: opts.Tools})
}

// OpenSandbox opens s for commands in workdir the way a session does, for
// session id: the executor, the backend it is (one of the Sandbox*
// constants, the runtime's name for docker, or "unavailable" when auto
// found none working, whose every command is refused with the reason) and
// a closer to call when done. A backend asked for by name that does not
// work here is an error. `rein sandbox exec` runs its command with it.
func OpenSandbox(ctx context.Context, s Sandbox, workdir, session string) (sandbox.Executor, string, io.Closer, error) {
	return harness.OpenExecutor(ctx, s.harness(), workdir, session)
}
