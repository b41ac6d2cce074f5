package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/ledger"
	"github.com/reinhq/rein/session/rollback"
	"github.com/reinhq/rein/tool"
)

// Builder turns an API request into the options of the public session
// builder (guarded.New), as `rein run` turns its flags: config, model,
// allowlist, mode, limits, sandbox. The host adds its own approver, asker
// and observer. An error is the request's fault (400).
type Builder func(ctx context.Context, req CreateRequest) (guarded.Options, error)

// BadRequestError is a request the builder refused.
type BadRequestError struct{ Err error }

func (e *BadRequestError) Error() string { return e.Err.Error() }
func (e *BadRequestError) Unwrap() error { return e.Err }

// LocalOptions configure the in-process host.
type LocalOptions struct {
	// Build makes a session's options from a request. Required.
	Build Builder
	// Queue is where the sessions' questions wait. Required.
	Queue *Queue
	// StateDir is where the host keeps its index of sessions, so a
	// restarted server lists them (interrupted ones with their resume
	// command). Required.
	StateDir string
	// Stopped, when set, is told of each session's end (webhooks). It must
	// not block.
	Stopped func(Info)
	// Ledger, when set, is the budget every hosted session shares: each
	// of its model calls is reserved there first (agent.Ledger), under the
	// tenant its request names. A builder that returns options whose
	// Ledger is a *ledger.Account passes the session's own caps, which
	// narrow the ledger's.
	Ledger *ledger.Ledger
	// Log receives operational messages; nil discards them.
	Log *slog.Logger
}

// Local is the in-process Host: sessions run as goroutines of this
// process, their logs in the audit dir, an index of them in StateDir.
type Local struct {
	o      LocalOptions
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	indexMu sync.Mutex
	index   *os.File

	mu       sync.Mutex
	sessions map[string]*hosted
	order    []string // oldest first
}

var _ Host = (*Local)(nil)

// indexLine is one line of StateDir/sessions.jsonl: a session this host
// started.
type indexLine struct {
	ID      string    `json:"id"`
	Task    string    `json:"task"`
	Model   string    `json:"model,omitempty"`
	Tenant  string    `json:"tenant,omitempty"`
	Workdir string    `json:"workdir"`
	Audit   string    `json:"audit"`
	Started time.Time `json:"started"`
}

// NewLocal opens the host's state dir and lists the sessions of earlier
// runs of the server from their audit logs: ended ones with their stop,
// the others as interrupted.
func NewLocal(o LocalOptions) (*Local, error) {
	if o.Build == nil || o.Queue == nil || o.StateDir == "" {
		return nil, errors.New("serve: LocalOptions.Build, Queue and StateDir are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("serve: state dir: %w", err)
	}
	path := filepath.Join(o.StateDir, "sessions.jsonl")
	l := &Local{o: o, sessions: map[string]*hosted{}}
	if err := l.load(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("serve: session index: %w", err)
	}
	l.index = f
	l.ctx, l.cancel = context.WithCancel(context.Background())
	o.Queue.Watch(func(a Approval) { l.noteApproval(a, nil) }, func(a Approval, out Outcome) { l.noteApproval(a, &out) })
	return l, nil
}

// load reads the index of an earlier run.
func (l *Local) load(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("serve: session index: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var ix indexLine
		if json.Unmarshal(sc.Bytes(), &ix) != nil || ix.ID == "" {
			continue // a cut last line of a killed server
		}
		if _, dup := l.sessions[ix.ID]; dup {
			continue
		}
		h := &hosted{info: Info{ID: ix.ID, Task: ix.Task, Model: ix.Model, Tenant: ix.Tenant, Workdir: ix.Workdir, Started: ix.Started, Audit: ix.Audit}, fromDisk: true}
		h.readLog()
		l.sessions[ix.ID] = h
		l.order = append(l.order, ix.ID)
	}
	return sc.Err()
}

// Create builds and starts a session.
func (l *Local) Create(ctx context.Context, req CreateRequest) (Info, error) {
	tenant := req.Tenant
	if tenant == "" {
		tenant = ledger.DefaultTenant
	}
	if err := ledger.CheckTenant(tenant); err != nil {
		return Info{}, &BadRequestError{Err: fmt.Errorf(`field "tenant": %w`, err)}
	}
	opts, err := l.o.Build(ctx, req)
	if err != nil {
		return Info{}, &BadRequestError{Err: err}
	}
	if l.o.Ledger != nil {
		var caps ledger.Caps
		if a, ok := opts.Ledger.(*ledger.Account); ok {
			caps = a.Caps
		}
		opts.Ledger = &ledger.Account{Ledger: l.o.Ledger, Tenant: tenant, Caps: caps}
	}
	reg, err := guarded.Tools(opts)
	if err != nil {
		return Info{}, &BadRequestError{Err: err}
	}
	h := &hosted{changed: make(chan struct{}), done: make(chan struct{}), price: opts.Price, limits: opts.Limits,
		reg: reg, undo: !opts.NoRollback}
	if h.limits == (guarded.Options{}).Limits {
		h.limits = defaultLimits()
	}
	h.info = Info{Task: req.Task, Model: req.Model, Tenant: tenant, Workdir: opts.WorkDir, State: StateRunning, Started: time.Now().UTC()}
	appr := &sessionApprover{q: l.o.Queue, h: h}
	opts.Approver, opts.Asker = appr, appr
	opts.Observe = chain(h.observe, opts.Observe)
	s, err := guarded.New(ctx, opts)
	if err != nil {
		return Info{}, &BadRequestError{Err: err}
	}
	id := s.ID()
	dir := opts.AuditDir
	if dir == "" {
		if dir, err = audit.DefaultDir(); err != nil {
			return Info{}, err
		}
	}
	h.info.ID, h.info.Audit = id, audit.FileName(dir, id)
	runCtx, abort := agent.WithAbort(l.ctx)
	h.abort = abort
	if err := l.record(indexLine{ID: id, Task: req.Task, Model: req.Model, Tenant: tenant, Workdir: opts.WorkDir, Audit: h.info.Audit, Started: h.info.Started}); err != nil {
		return Info{}, err
	}
	l.mu.Lock()
	l.sessions[id] = h
	l.order = append(l.order, id)
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer s.Close()
		res := s.Run(runCtx, req.Task)
		h.finish(res)
		if l.o.Stopped != nil {
			l.o.Stopped(h.snapshot())
		}
		l.o.Log.Info("session ended", "session", id, "stop", res.Stop)
	}()
	return h.snapshot(), nil
}

// record appends one line to the index, durably: a server killed after
// Create returned still lists the session.
func (l *Local) record(ix indexLine) error {
	b, err := json.Marshal(ix)
	if err != nil {
		return err
	}
	l.indexMu.Lock()
	defer l.indexMu.Unlock()
	if _, err := l.index.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("serve: session index: %w", err)
	}
	if err := l.index.Sync(); err != nil {
		return fmt.Errorf("serve: session index: %w", err)
	}
	return nil
}

func (l *Local) get(id string) (*hosted, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok := l.sessions[id]
	if !ok {
		return nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	return h, nil
}

// Sessions lists the sessions, newest first.
func (l *Local) Sessions() []Info {
	l.mu.Lock()
	hs := make([]*hosted, 0, len(l.order))
	for _, id := range slices.Backward(l.order) {
		hs = append(hs, l.sessions[id])
	}
	l.mu.Unlock()
	out := make([]Info, 0, len(hs))
	for _, h := range hs {
		i := h.snapshot()
		i.Pending = len(l.o.Queue.Pending(i.ID))
		out = append(out, i)
	}
	return out
}

// Session returns one session.
func (l *Local) Session(id string) (Info, error) {
	h, err := l.get(id)
	if err != nil {
		return Info{}, err
	}
	i := h.snapshot()
	i.Pending = len(l.o.Queue.Pending(id))
	return i, nil
}

// Events returns the session's events from number from on.
func (l *Local) Events(id string, from int) ([]json.RawMessage, <-chan struct{}, bool, error) {
	h, err := l.get(id)
	if err != nil {
		return nil, nil, false, err
	}
	evs, more, ended := h.eventsFrom(from)
	return evs, more, ended, nil
}

// Abort stops a running session.
func (l *Local) Abort(id, reason string) error {
	h, err := l.get(id)
	if err != nil {
		return err
	}
	if h.abort != nil {
		h.abort(reason)
	}
	return nil
}

// AbortAll stops every running session.
func (l *Local) AbortAll(reason string) int {
	l.mu.Lock()
	hs := make([]*hosted, 0, len(l.sessions))
	for _, h := range l.sessions {
		hs = append(hs, h)
	}
	l.mu.Unlock()
	n := 0
	for _, h := range hs {
		if h.abort != nil && h.snapshot().State == StateRunning {
			h.abort(reason)
			n++
		}
	}
	return n
}

// Rollback undoes the files an ended session changed.
func (l *Local) Rollback(id string) ([]rollback.FileReport, error) {
	h, err := l.get(id)
	if err != nil {
		return nil, err
	}
	i := h.snapshot()
	if i.State == StateRunning {
		return nil, fmt.Errorf("session %s: %w", id, ErrRunning)
	}
	h.mu.Lock()
	dir := h.rollbackDir
	h.mu.Unlock()
	if dir == "" {
		if dir, err = rollback.Dir(); err != nil {
			return nil, err
		}
	}
	return rollback.Restore(dir, id)
}

// AuditPath is the session's audit log.
func (l *Local) AuditPath(id string) (string, error) {
	h, err := l.get(id)
	if err != nil {
		return "", err
	}
	return h.snapshot().Audit, nil
}

// Close aborts every session and waits for them (or ctx).
func (l *Local) Close(ctx context.Context) error {
	l.AbortAll("the server is shutting down")
	l.cancel()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	l.indexMu.Lock()
	defer l.indexMu.Unlock()
	return l.index.Close()
}

func chain(a, b func(audit.Record)) func(audit.Record) {
	if b == nil {
		return a
	}
	return func(r audit.Record) { a(r); b(r) }
}

// effectOf is what the approver shows of a tool's effect: its class, and
// whether rein can undo it.
func effectOf(reg *tool.Registry, name string, rollbackOn bool) (string, bool) {
	if reg == nil {
		return "unknown", false
	}
	t, ok := reg.Lookup(name)
	if !ok {
		return "unknown", false
	}
	e := t.Spec().Effect
	return e.String(), e == tool.Reversible && rollbackOn
}

// sessionApprover puts one session's questions into the queue, with the
// session's state at the time.
type sessionApprover struct {
	q *Queue
	h *hosted
}

var (
	_ approve.Chooser = (*sessionApprover)(nil)
	_ approve.Asker   = (*sessionApprover)(nil)
)

func (a *sessionApprover) base() Approval {
	i := a.h.snapshot()
	return Approval{Session: i.ID, Task: i.Task, Step: i.Step, Tokens: i.Tokens, CostUSD: i.CostUSD, Caps: CapsOf(a.h.limits)}
}

// Choose asks the queue about a call; Deny is the default, and a sticky
// answer only where the request offers a pattern.
func (a *sessionApprover) Choose(ctx context.Context, req approve.Request) (approve.Answer, error) {
	ap := a.base()
	ap.Kind, ap.Tool, ap.Args, ap.Gate, ap.Reason, ap.Pattern, ap.Contract = KindCall, req.Tool, req.Args, req.Gate, req.Reason, req.Pattern, req.Contract
	ap.Effect, ap.Undoable = effectOf(a.h.reg, req.Tool, a.h.undo)
	ans, _, err := a.q.Wait(ctx, ap, 0)
	return ans, err
}

// Approve is Choose's yes or no.
func (a *sessionApprover) Approve(ctx context.Context, req approve.Request) (bool, error) {
	ans, err := a.Choose(ctx, req)
	return ans.Yes && err == nil, err
}

// Ask puts the model's question into the queue; a deny or no answer in
// time is approve.ErrNoAnswer.
func (a *sessionApprover) Ask(ctx context.Context, question string) (string, error) {
	ap := a.base()
	ap.Kind, ap.Question = KindQuestion, question
	ans, text, err := a.q.Wait(ctx, ap, 0)
	if err != nil {
		return "", err
	}
	if !ans.Yes || text == "" {
		return "", approve.ErrNoAnswer
	}
	return text, nil
}

// approvalEvent is an approval's line in the session's event stream (its
// token is not in it: GET /v1/approvals has it).
type approvalEvent struct {
	Type     string    `json:"type"` // "approval"
	Session  string    `json:"session"`
	Approval *Approval `json:"approval,omitempty"`
	Outcome  *Outcome  `json:"outcome,omitempty"`
}

// Event types the server adds to the --json shapes.
const (
	EventApproval = "approval"        // a question waits in the queue
	EventAnswered = "approval_answer" // what became of it: who answered, how, when
)

// noteApproval adds an approval (or its outcome) to its session's stream.
func (l *Local) noteApproval(a Approval, out *Outcome) {
	h, err := l.get(a.Session)
	if err != nil {
		return
	}
	e := approvalEvent{Type: EventApproval, Session: a.Session}
	if out != nil {
		e.Type, e.Outcome = EventAnswered, out
	} else {
		a.Token = ""
		e.Approval = &a
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	h.append(b)
}
