// Package harness assembles one session of rein from its parts — audit log,
// tools, gates, budget, model — runs it, and checks the answer against the
// ground truth when there is one. `rein run` and `rein demo` both run through
// it, so a demo exercises exactly what a real run does.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"math/big"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/calc"
	fstool "github.com/reinhq/rein/tool/fs"
	"github.com/reinhq/rein/tool/mail"
)

// Spec is one session to run.
type Spec struct {
	Scenario string // the demo's name; empty for `rein run`
	Task     string
	Model    model.Model
	// Files is what read_file sees: the work directory or a demo's files.
	Files iofs.FS
	// Chunk is how many characters read_file hands out per call.
	Chunk int
	// Allowed is the session's tool allowlist.
	Allowed  []string
	Approver approve.Approver
	Limits   budget.Limits
	// Expect is the ground-truth number the answer must contain; empty for none.
	Expect string
	// AuditDir is where the audit log goes; empty for audit.DefaultDir().
	AuditDir   string
	Durability audit.Durability
	// Observe sees every audit record as it is written (trace, --json events).
	Observe func(audit.Record)
	// Meta is recorded at session start as the effective configuration.
	Meta any
}

// Check outcomes.
const (
	CheckPass = "pass"
	CheckFail = "fail"
	CheckNone = "none"
)

// Outcome is what a session did.
type Outcome struct {
	agent.Result
	Scenario string
	Outbox   []mail.Message
	Check    string
	Expect   string
	Session  string
	Audit    string
}

// Final is the one JSON object printed at the end of a run with --json.
type Final struct {
	Scenario string `json:"scenario"`
	Stop     string `json:"stop"`
	Steps    int    `json:"steps"`
	Tokens   int64  `json:"tokens"`
	Answer   string `json:"answer"`
	Outbox   int    `json:"outbox"`
	Check    string `json:"check"`
	Session  string `json:"session"`
	Audit    string `json:"audit"`
	Error    string `json:"error,omitempty"`
}

// Final returns the outcome's final object.
func (o *Outcome) Final() Final {
	f := Final{
		Scenario: o.Scenario, Stop: string(o.Stop), Steps: o.Steps, Tokens: o.Tokens, Answer: o.Answer,
		Outbox: len(o.Outbox), Check: o.Check, Session: o.Session, Audit: o.Audit,
	}
	if o.Err != nil && o.Stop != agent.StopDone {
		f.Error = o.Err.Error()
	}
	return f
}

// Tools returns the tools of this sessions: read_file over files,
// calc, and send_email into outbox.
func Tools(files iofs.FS, chunk int, outbox *mail.Outbox) (*tool.Registry, error) {
	return tool.NewRegistry(fstool.ReadFile(files, chunk), calc.New(), mail.SendEmail(outbox))
}

// Gates returns the standard pipeline for an allowlist, cheapest gate first.
func Gates(allowed []string, approver approve.Approver) *gate.Pipeline {
	return gate.NewPipeline(approver, gate.NewAvailability(allowed), gate.Validation{}, gate.Confirm{})
}

// Run runs one session. The error is for a session that could not start
// (bad spec, unwritable audit directory); everything after the start is in
// the Outcome.
func Run(ctx context.Context, spec Spec) (*Outcome, error) {
	var want *big.Rat
	if spec.Expect != "" {
		w, err := eval.ParseExpected(spec.Expect)
		if err != nil {
			return nil, err
		}
		want = w
	}
	outbox := &mail.Outbox{}
	reg, err := Tools(spec.Files, spec.Chunk, outbox)
	if err != nil {
		return nil, err
	}
	if err := reg.CheckNames(spec.Allowed); err != nil {
		return nil, fmt.Errorf("allowlist: %w", err)
	}
	var meta json.RawMessage
	if spec.Meta != nil {
		if meta, err = json.Marshal(spec.Meta); err != nil {
			return nil, fmt.Errorf("encode configuration: %w", err)
		}
	}
	dir := spec.AuditDir
	if dir == "" {
		if dir, err = audit.DefaultDir(); err != nil {
			return nil, err
		}
	}
	id := session.NewID(time.Now())
	opts := []audit.Option{audit.WithDurability(spec.Durability)}
	if spec.Observe != nil {
		opts = append(opts, audit.WithObserver(spec.Observe))
	}
	log, err := audit.Create(dir, id, opts...)
	if err != nil {
		return nil, err
	}
	loop, err := agent.New(agent.Config{
		Model:  spec.Model,
		Tools:  reg,
		Gates:  Gates(spec.Allowed, spec.Approver),
		Limits: spec.Limits,
		Audit:  log,
		Meta:   meta,
	})
	if err != nil {
		return nil, errors.Join(err, log.Close())
	}
	res := loop.Run(ctx, spec.Task)
	if err := log.Close(); err != nil && res.Err == nil {
		res.Stop, res.Err = agent.StopError, fmt.Errorf("close the audit log: %w", err)
	}
	out := &Outcome{
		Result: res, Scenario: spec.Scenario, Outbox: outbox.Messages(), Check: CheckNone, Expect: spec.Expect,
		Session: id, Audit: log.Path(),
	}
	if want != nil {
		out.Check = CheckFail
		if res.Stop == agent.StopDone && eval.ContainsNumber(res.Answer, want) {
			out.Check = CheckPass
		}
	}
	return out, nil
}
