package harness

import (
	"fmt"
	"os"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/contract"
	"github.com/reinhq/rein/gate/drift"
	"github.com/reinhq/rein/gate/flow"
	"github.com/reinhq/rein/gate/network"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/scope"
	"github.com/reinhq/rein/gate/shell"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/protect"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/bash"
	"github.com/reinhq/rein/tool/calc"
	fstool "github.com/reinhq/rein/tool/fs"
	"github.com/reinhq/rein/tool/mail"
	"github.com/reinhq/rein/tool/plan"
	"github.com/reinhq/rein/tool/web"
)

// Env is what one session's tools act on. The zero value builds a registry
// whose tools can be named and described but not run (for checking names).
type Env struct {
	Root      *os.Root // the work dir, for the file tools
	WorkDir   string   // its absolute path, for the shell
	ReadLines int      // read_file's default limit
	Outbox    *mail.Outbox
	Plan      *plan.Session
	Asker     approve.Asker
	Net       *netguard.Policy
	Exec      sandbox.Executor
	Redact    func(string) string // the session's redactor: files it would change are credential files
	Extra     []tool.Tool         // the caller's own tools, after the built-in ones
	// Protected are the paths no shell command may change; nil means
	// protect.Default(). Quarantine is where what a command left there
	// is kept when it is undone.
	Protected  *protect.List
	Quarantine string
	// Staging is what run_bash does with staged writes (bash.Staging).
	Staging *bash.Staging
}

// Tools returns the registry of a session's tools.
func Tools(e Env) (*tool.Registry, error) {
	if e.Outbox == nil {
		e.Outbox = &mail.Outbox{}
	}
	if e.Plan == nil {
		e.Plan = plan.New()
	}
	if e.Asker == nil {
		e.Asker = approve.Unanswered{}
	}
	if e.Net == nil {
		e.Net = &netguard.Policy{}
	}
	if e.Exec == nil {
		e.Exec = &sandbox.Local{}
	}
	tools := fstool.Tools(e.Root, fstool.Options{DefaultLimit: e.ReadLines, Redact: e.Redact})
	tools = append(tools,
		bash.RunBash(e.Exec, e.WorkDir, bash.Options{Protected: e.Protected, Quarantine: e.Quarantine, Staging: e.Staging}),
		web.Fetch(e.Net),
		calc.New(),
		mail.SendEmail(e.Outbox),
	)
	tools = append(tools, e.Plan.Tools(e.Asker)...)
	tools = append(tools, e.Extra...)
	return tool.NewRegistry(tools...)
}

// Policy is what decides calls in a session.
type Policy struct {
	Allowed    []string
	Mode       permission.Mode
	Rules      []permission.Rule
	ToolLimits map[string]int
	Approver   approve.Approver
	// Drift, when set, is the intent-drift gate; it goes before the
	// permission gate, so it asks even where the mode would allow.
	Drift *drift.Gate
	// Flow is what the data-flow gate does when a side-effecting call
	// carries a value that came from a tool result, not from the user:
	// "ask" (also ""), "deny" or "off" (no gate).
	Flow string
	// Provenance is the ledger the data-flow gate judges by; the loop feeds
	// it. Nil gives the gate an empty ledger of its own (policy check).
	Provenance *flow.Ledger
	// Protected are the protected paths a write asks about in every mode
	// (config's Protect.List()); nil is the built-in list, never none.
	Protected *protect.List
	// Exec is what the session's executor lets commands do (Capabilities
	// of its backend), so that the shell analysis is sandbox-aware; the
	// zero value is no sandbox, the strictest reading.
	Exec shell.Executor
	// Saver saves the "always" answers a human gives when the approver
	// offers answers that stick (an approve.Chooser, like the terminal):
	// then the pipeline keeps session rules (gate.Pipeline.WithStickyAnswers).
	// Nil keeps "always" answers for the session only.
	Saver gate.RuleSaver
	// Contract, when set, is the session's task contract: the contract
	// gate judges every side-effecting call by it, and the model may state
	// one (contract.ToolName is offered). A holder that requires a
	// contract (unattended runs) refuses side effects until one is in
	// force.
	Contract *contract.Holder
	// Lookup finds the session's tools by name, for the contract gate; nil
	// looks among the built-in tools only.
	Lookup func(name string) (tool.Tool, bool)
}

// FlowGate returns the data-flow gate for a Flow setting over l, nil for
// "off". The setting is one of config's flow.on_hit values.
func FlowGate(setting string, l *flow.Ledger, workdir string) (*flow.Gate, error) {
	onHit := gate.Ask
	switch setting {
	case "", "ask":
	case "deny":
		onHit = gate.Deny
	case "off":
		return nil, nil
	default:
		return nil, fmt.Errorf("flow.on_hit is %q: use ask, deny or off", setting)
	}
	if l == nil {
		l = flow.NewLedger()
	}
	return flow.NewGate(l, onHit).WithWorkDir(workdir), nil
}

// Gates returns the session's pipeline, cheapest gate first: availability,
// validation, scope, existence, shell, network, contract (when the policy
// has one), flow, confirm, limit,
// permission, then approval. In bypass mode nobody is asked: what a gate
// would ask about is refused.
//
// The data-flow gate goes before confirm so that when both ask (a payment
// to a recipient a tool result named), the human reads its reason, the one
// that matters; since the first Deny wins, the order changes no decision.
func Gates(p Policy, workdir string, net *netguard.Policy) (*gate.Pipeline, error) {
	if p.Mode == "" {
		p.Mode = permission.Default
	}
	sc, err := scope.NewGate(workdir)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	sc.WithProtected(p.Protected)
	shOpts := shell.Options{WorkDir: workdir, Home: home(), Protected: p.Protected, Exec: p.Exec, ExecTool: bash.Name}
	perm, err := permission.NewGate(p.Mode, p.Rules, shOpts)
	if err != nil {
		return nil, err
	}
	if net == nil {
		net = &netguard.Policy{}
	}
	gates := []gate.Gate{
		gate.NewAvailability(p.Allowed),
		gate.Validation{},
		sc,
		gate.Existence{},
		shell.NewGate(shOpts),
		network.NewGate(net),
	}
	if p.Contract != nil {
		lookup := p.Lookup
		if lookup == nil {
			reg, err := Tools(Env{})
			if err != nil {
				return nil, err
			}
			lookup = reg.Lookup
		}
		if p.Provenance != nil {
			p.Contract.Trace(p.Provenance)
		}
		gates = append(gates, contract.NewGate(p.Contract, lookup))
	}
	fg, err := FlowGate(p.Flow, p.Provenance, workdir)
	if err != nil {
		return nil, err
	}
	if fg != nil {
		if p.Contract != nil {
			fg.WithBinder(p.Contract)
		}
		gates = append(gates, fg)
	}
	gates = append(gates,
		gate.Confirm{},
		gate.NewLimit(p.ToolLimits),
	)
	if p.Drift != nil {
		gates = append(gates, p.Drift)
	}
	pl := gate.NewPipeline(p.Approver, append(gates, perm)...)
	if p.Mode == permission.Bypass {
		pl.WithoutAsking()
	} else if _, ok := p.Approver.(approve.Chooser); ok {
		pl.WithStickyAnswers(p.Saver)
	}
	return pl, nil
}

func home() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}
