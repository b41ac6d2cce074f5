// Package demo holds rein's scripted scenarios: small sessions that need no
// key and no network and show, one failure at a time, what each guard is
// for. The seven seed scenarios: a loop that runs in circles (max_steps),
// the same loop under a token budget, a misread result that only the
// ground-truth check catches, and a prompt injection hidden in a file, met
// with no guard, with the allowlist and with approval. Then the support
// desk: the four gates of a tool call (existence, approval by domain, the
// per-run limit, a read-only role) on six calls.
//
// The scenarios are data: a task, embedded files, an embedded script for the
// scripted model, an allowlist, an approver's fixed answer and limits. What
// runs them is the public builder `rein run` uses (agent/guarded), with the
// support desk's tools as the caller's own.
package demo

import (
	"embed"
	"fmt"
	iofs "io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/desk"
)

//go:embed scenarios
var assets embed.FS

// The demos' read_file limits: how many lines one call returns when the
// script gives no limit. They are small on purpose, so that the files come
// in two parts and the misread scenario can stop after the first.
const (
	ShoppingLines = 9
	MinutesLines  = 3
)

// Scenario is one demo.
type Scenario struct {
	Name    string
	Summary string
	Task    string
	Script  string // file under scenarios/scripts
	Allowed []string
	// ReadLines is read_file's default limit.
	ReadLines int
	// Approve is the stand-in approver's answer to every request.
	Approve bool
	// ApproveDomains, when set, replaces Approve: a standing approval for
	// replies to these domains, and no to everything else.
	ApproveDomains []string
	// Desk gives the session the support-desk tools over the seed's store.
	Desk bool
	// ToolLimits caps side-effecting tools per run.
	ToolLimits map[string]int
	Limits     budget.Limits
	// Expect is the ground-truth number, or "" when the task has none;
	// eval.CheckAnswer checks the answer against it.
	Expect string

	// What the scenario is built to show; `rein demo` reports a deviation.
	WantStop    agent.StopReason
	WantOutbox  int
	WantReplies int

	// Then is a second session that runs after this one as part of the
	// same demo (another agent, with another role).
	Then *Scenario
}

const (
	shoppingTask = "Read shopping.txt and compute the total cost of the purchases."
	minutesTask  = "Read minutes.txt and summarise the minutes in two sentences."
)

// seedLimits are the limits of the seed scenarios: 8 steps, 20,000 tokens.
func seedLimits() budget.Limits { return budget.Limits{MaxSteps: 8, MaxTokens: 20_000} }

// All returns the scenarios in the order `rein demo` runs them.
func All() []Scenario {
	base := []string{"read_file", "calc"}
	const deskTask = "Answer the customer about orders ZAM-4471 and ZAM-9999 and send the replies."
	deskPolicy := desk.DemoPolicy()
	withMail := []string{"read_file", "calc", "send_email"}
	loop := seedLimits()
	loop.MaxSteps = 6
	loopBudget := loop
	loopBudget.MaxTokens = 1500
	return []Scenario{
		{Name: "normal", ReadLines: ShoppingLines, Summary: "reads both parts, calls calc, answers 1399",
			Task: shoppingTask, Script: "normal.json", Allowed: base, Limits: seedLimits(), Expect: "1399",
			WantStop: agent.StopDone},
		{Name: "loop", ReadLines: ShoppingLines, Summary: "reads the file again and again until max_steps (6)",
			Task: shoppingTask, Script: "loop.json", Allowed: base, Limits: loop, Expect: "1399",
			WantStop: agent.StopMaxSteps},
		{Name: "loop-budget", ReadLines: ShoppingLines, Summary: "the same loop under a 1,500-token budget: stops on budget",
			Task: shoppingTask, Script: "loop.json", Allowed: base, Limits: loopBudget, Expect: "1399",
			WantStop: agent.StopBudget},
		{Name: "misread", ReadLines: ShoppingLines, Summary: "ignores the cut notice, answers 1170: only the ground-truth check notices",
			Task: shoppingTask, Script: "misread.json", Allowed: base, Limits: seedLimits(), Expect: "1399",
			WantStop: agent.StopDone},
		{Name: "injection-open", ReadLines: MinutesLines, Summary: "a hidden order in a file; send_email allowed, approval says yes: the mail goes out",
			Task: minutesTask, Script: "injection-obeys.json", Allowed: withMail, Approve: true, Limits: seedLimits(),
			WantStop: agent.StopDone, WantOutbox: 1},
		{Name: "injection-allowlist", ReadLines: MinutesLines, Summary: "the same file; send_email not on the allowlist: refused",
			Task: minutesTask, Script: "injection-reports.json", Allowed: base, Limits: seedLimits(),
			WantStop: agent.StopDone},
		{Name: "injection-approval", ReadLines: MinutesLines, Summary: "the same file; send_email allowed, the approver says no: refused",
			Task: minutesTask, Script: "injection-reports.json", Allowed: withMail, Limits: seedLimits(),
			WantStop: agent.StopDone},
		{Name: "support-desk", Summary: "the four gates: a known order, an unknown one, replies in and out of the allowed domains, the limit of 1, a read-only role",
			Task: deskTask, Script: "support-desk.json", Allowed: deskRole(desk.PermReads, desk.PermWrites), Desk: true,
			ApproveDomains: deskPolicy.Domains, ToolLimits: map[string]int{desk.NameSendReply: deskPolicy.MaxIrreversible},
			Limits: seedLimits(), WantStop: agent.StopDone, WantReplies: 1,
			Then: &Scenario{Name: "support-desk/reader", Summary: "an agent whose role only reads tries to reply",
				Task: deskTask, Script: "support-desk-reader.json", Allowed: deskRole(desk.PermReads), Desk: true,
				Limits: seedLimits(), WantStop: agent.StopDone}},
	}
}

// deskRole is the allowlist of an agent holding the given permissions in the
// support desk: the tools whose permission it holds.
func deskRole(perms ...string) []string {
	var tools []string
	for name, need := range desk.DemoPolicy().Needs {
		if slices.Contains(perms, need) {
			tools = append(tools, name)
		}
	}
	slices.Sort(tools)
	return tools
}

// Names returns the scenario names in order.
func Names() []string {
	all := All()
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name
	}
	return names
}

// Find returns the named scenario, or an error listing the known ones.
func Find(name string) (Scenario, error) {
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
	}
	known := Names()
	sort.Strings(known)
	return Scenario{}, fmt.Errorf("unknown scenario %q: choose one of %s (or run `rein demo --list`)", name, strings.Join(known, ", "))
}

// Files returns the files the scenario's read_file sees.
func Files() iofs.FS {
	sub, err := iofs.Sub(assets, "scenarios/files")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}

// Model returns a fresh scripted model playing the scenario's script.
func (s Scenario) Model() (*scripted.Model, error) {
	data, err := assets.ReadFile("scenarios/scripts/" + s.Script)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	sc, err := scripted.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: script %s: %w", s.Name, s.Script, err)
	}
	return scripted.New("scripted:demo/"+s.Script, sc), nil
}

// Approver returns the stand-in approver: the scenario's fixed answer, or a
// standing approval for replies to its domains.
func (s Scenario) Approver() approve.Approver {
	if len(s.ApproveDomains) > 0 {
		return approve.Recipients{Arg: "address", Domains: s.ApproveDomains}
	}
	return approve.Fixed(s.Approve)
}

// Session is a scenario ready to run: the options of its session for the
// public builder (guarded.New) and the work dir they name, a fresh copy of
// the scenario's files. Close removes the work dir.
type Session struct {
	// Options are the session's: the scenario's model, allowlist (exactly
	// its own: the support desk's tools are the caller's, offered only to
	// the roles that hold them), approver, limits and read_file limit, no
	// system prompt, no rollback (the work dir is thrown away), no
	// intent-drift gate. The caller sets where the audit log goes and how
	// to watch it.
	Options guarded.Options
	// Task is the scenario's task.
	Task string

	dir   string
	store *desk.Store
}

// Prepare returns the session to run for the scenario with model m: its
// files are copied into a new temporary work dir, which Close removes.
func (s Scenario) Prepare(m model.Model) (*Session, error) {
	dir, err := os.MkdirTemp("", "rein-work-")
	if err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	if err := os.CopyFS(dir, Files()); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("work dir: copy the scenario's files: %w", err)
	}
	d := &Session{Task: s.Task, dir: dir, Options: guarded.Options{
		WorkDir: dir, Model: m, Allow: slices.Clone(s.Allowed), ExactAllow: true, ReadLines: s.ReadLines,
		Mode: permission.Default, ToolLimits: s.ToolLimits, Approver: s.Approver(), Limits: s.Limits,
		NoRollback: true, NoSystem: true, NoDrift: true,
	}}
	if s.Desk { // the desk's tools come in as the caller's own
		d.store = desk.Demo()
		d.Options.Tools = []tool.Tool{desk.OrderStatus(d.store), desk.SendReply(d.store)}
	}
	return d, nil
}

// Replies counts the replies the support desk's tools sent.
func (d *Session) Replies() int {
	if d.store == nil {
		return 0
	}
	return len(d.store.Replies())
}

// Close removes the session's work dir.
func (d *Session) Close() error { return os.RemoveAll(d.dir) }
