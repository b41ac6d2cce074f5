package harness

import (
	"fmt"
	"os"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/network"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/scope"
	"github.com/reinhq/rein/gate/shell"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/bash"
	"github.com/reinhq/rein/tool/calc"
	"github.com/reinhq/rein/tool/desk"
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
	Desk      *desk.Store // the support-desk tools are present only with a store
	Asker     approve.Asker
	Net       *network.Policy
	Exec      sandbox.Executor
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
		e.Net = &network.Policy{}
	}
	if e.Exec == nil {
		e.Exec = &sandbox.Local{}
	}
	tools := fstool.Tools(e.Root, fstool.Options{DefaultLimit: e.ReadLines})
	tools = append(tools,
		bash.RunBash(e.Exec, e.WorkDir, bash.Options{}),
		web.Fetch(e.Net),
		calc.New(),
		mail.SendEmail(e.Outbox),
	)
	tools = append(tools, e.Plan.Tools(e.Asker)...)
	if e.Desk != nil {
		tools = append(tools, desk.OrderStatus(e.Desk), desk.SendReply(e.Desk))
	}
	return tool.NewRegistry(tools...)
}

// Policy is what decides calls in a session.
type Policy struct {
	Allowed    []string
	Mode       permission.Mode
	Rules      []permission.Rule
	ToolLimits map[string]int
	Approver   approve.Approver
}

// Gates returns the session's pipeline, cheapest gate first: availability,
// validation, scope, existence, shell, network, confirm, limit, permission,
// then approval. In bypass mode nobody is asked: what a gate would ask
// about is refused.
func Gates(p Policy, workdir string, net *network.Policy) (*gate.Pipeline, error) {
	if p.Mode == "" {
		p.Mode = permission.Default
	}
	sc, err := scope.NewGate(workdir)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	shOpts := shell.Options{WorkDir: workdir, Home: home()}
	perm, err := permission.NewGate(p.Mode, p.Rules, shOpts)
	if err != nil {
		return nil, err
	}
	if net == nil {
		net = &network.Policy{}
	}
	pl := gate.NewPipeline(p.Approver,
		gate.NewAvailability(p.Allowed),
		gate.Validation{},
		sc,
		gate.Existence{},
		shell.NewGate(shOpts),
		network.NewGate(net),
		gate.Confirm{},
		gate.NewLimit(p.ToolLimits),
		perm,
	)
	if p.Mode == permission.Bypass {
		pl.WithoutAsking()
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
