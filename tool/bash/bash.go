// Package bash provides run_bash, the tool that runs a shell command line for
// the model through a sandbox.Executor, in the work dir or a directory inside
// it, and reports the exit code and the (capped) output.
//
// run_bash does not judge commands: the shell gate decides which command
// lines may run, the scope gate which directories, and the executor bounds
// what a running command can reach. The tool only refuses a working directory
// that leads outside the work dir, as a second line behind the scope gate.
package bash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein/protect"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool"
)

// Name is the tool's name.
const Name = "run_bash"

// Defaults of Options.
const (
	DefaultTimeout = 120 * time.Second
	MaxTimeout     = 600 * time.Second
)

// MaxCommand is the longest command line run_bash accepts, in characters.
const MaxCommand = 4096

// Options configure run_bash.
type Options struct {
	// Env is the commands' complete environment; nil means the executor's
	// minimal one (sandbox.MinimalEnv).
	Env []string
	// MaxTimeout is the largest timeout_s the model may ask for; 0 means
	// MaxTimeout (600 s). It is rounded down to whole seconds, at least 1.
	MaxTimeout time.Duration
	// DefaultTimeout applies when the model gives no timeout_s; 0 means
	// DefaultTimeout (120 s). It is capped at MaxTimeout.
	DefaultTimeout time.Duration
	// Protected are the protected paths no command may change (see
	// watch.go); nil means protect.Default().
	Protected *protect.List
	// Quarantine is where what a command left at a protected path is
	// kept when rein undoes it; "" means a directory under os.TempDir().
	// It must lie outside the work dir.
	Quarantine string
	// Staging says what to do with the writes of a command the executor
	// staged (see Staging); nil means the zero Staging: apply with no
	// rollback copy, and refuse what would ask.
	Staging *Staging
}

// Args are run_bash's arguments.
type Args struct {
	Command  string `json:"command"`
	TimeoutS int    `json:"timeout_s,omitempty"`
	Workdir  string `json:"workdir,omitempty"`
}

// Check refuses what the schema cannot express.
func (a *Args) Check() error {
	switch {
	case strings.TrimSpace(a.Command) == "":
		return errors.New(`"command" is blank: give the shell command line to run`)
	case strings.ContainsRune(a.Command, 0):
		return errors.New(`"command" contains a NUL character, which a shell command line cannot hold`)
	case strings.ContainsRune(a.Workdir, 0):
		return errors.New(`"workdir" contains a NUL character: give a directory relative to the working directory, like "src"`)
	}
	return nil
}

// RunBash returns the run_bash tool, which runs commands with ex in workdir
// (the session's work dir, absolute) or a directory inside it.
//
// Its effect class is tool.Reversible although a shell command can do
// anything: classing it irreversible would put every command before a human.
// What a command may do is bounded by the shell gate (which command lines
// run at all, and which need a yes), the scope gate and the executor's
// sandbox, not by the effect class.
func RunBash(ex sandbox.Executor, workdir string, o Options) tool.Tool {
	maxT := o.MaxTimeout
	if maxT <= 0 {
		maxT = MaxTimeout
	}
	maxS := max(int(maxT/time.Second), 1)
	maxT = time.Duration(maxS) * time.Second
	defT := o.DefaultTimeout
	if defT <= 0 {
		defT = DefaultTimeout
	}
	defT = min(defT, maxT)
	env := slices.Clone(o.Env) // nil stays nil
	if abs, err := filepath.Abs(workdir); err == nil {
		workdir = abs
	}

	list := o.Protected
	if list == nil {
		list = protect.Default()
	}
	staging := Staging{}
	if o.Staging != nil {
		staging = *o.Staging
	}
	r := &runner{ex: ex, root: workdir, env: env, def: defT, max: maxT, staging: staging, staged: o.Staging != nil,
		watch: &watch{root: workdir, list: list, quarantine: o.Quarantine}}
	return tool.New(tool.Spec{
		Name:        Name,
		Description: description(defT, maxS),
		Schema:      schema(maxS),
		Effect:      tool.Reversible,
		Roles:       map[string]tool.Role{"command": tool.RoleCommand, "workdir": tool.RoleDir},
	}, r.run).WithLookup(r.lookup)
}

func description(def time.Duration, maxS int) string {
	return fmt.Sprintf("Run a bash command line and get its exit code, stdout and stderr. "+
		"It runs in the working directory, or in \"workdir\", a directory inside it given relative to it. "+
		"It runs without a terminal, with empty stdin and a minimal environment. "+
		"It is stopped after timeout_s seconds (default %d, at most %d), together with everything it started; "+
		"background processes end when the command ends. "+
		"Long output is cut in the middle, so keep it short (head, tail, grep, wc -l). "+
		"A non-zero exit code is an answer, not a failure of the tool: read stderr. "+
		"Network access, privilege escalation (sudo, su) and writes outside the working directory are refused by policy; "+
		"do not try to work around a refusal.", int(def/time.Second), maxS)
}

func schema(maxS int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"command":{"type":"string","minLength":1,"maxLength":%d,"description":"The bash command line to run"},`+
		`"timeout_s":{"type":"integer","minimum":1,"maximum":%d,"description":"Seconds before the command is stopped"},`+
		`"workdir":{"type":"string","minLength":1,"maxLength":4096,"description":"Directory to run in, relative to the working directory; default \".\""}},`+
		`"required":["command"],"additionalProperties":false}`, MaxCommand, maxS))
}

type runner struct {
	ex       sandbox.Executor
	root     string
	env      []string
	def, max time.Duration
	watch    *watch
	staging  Staging
	staged   bool        // the session stages (Options.Staging set)
	told     atomic.Bool // the model was told the sandbox could not stage
	unstaged atomic.Bool // a command could not be staged: every later one is watched
}

func (r *runner) run(ctx context.Context, a Args) (string, error) {
	dir, err := resolveDir(r.root, a.Workdir)
	if err != nil {
		return "", err
	}
	timeout := r.def
	if a.TimeoutS > 0 {
		timeout = min(time.Duration(a.TimeoutS)*time.Second, r.max)
	}
	// A staged command's writes to protected paths are refused when they
	// are settled (protectedStaged), so the watch — two walks of the work
	// dir, most of a command's cost in a large repository — is for
	// commands that write straight to the work dir. It is skipped while
	// the executor says it stages, and then the command must be staged
	// (Cmd.MustStage): an executor that cannot stage it runs nothing and
	// says so (ErrNotStaged), and it runs again, watched, as does every
	// later command.
	watched := r.unstaged.Load() || !r.stagesNow()
	cmd := sandbox.Cmd{Script: a.Command, Dir: dir, Env: r.env, Timeout: timeout, MustStage: !watched}
	var before map[string]node
	if watched {
		before = r.watch.snapshot()
	}
	res, err := r.ex.Exec(ctx, cmd)
	if errors.Is(err, sandbox.ErrNotStaged) {
		// Nothing ran: it could not be staged (the overlay could not be
		// mounted, or the executor does not stage after all). From now on
		// commands write straight to the work dir, watched.
		r.unstaged.Store(true)
		if !watched {
			watched, before = true, r.watch.snapshot()
		}
		cmd.MustStage = false
		res, err = r.ex.Exec(ctx, cmd)
	}
	// Staged writes are judged and applied (or dropped) first: an aborted
	// or failed run applies nothing.
	var staged string
	if res.Staged != nil {
		if err != nil {
			_ = res.Staged.Discard()
		} else if staged, err = r.settle(ctx, res.Staged); err != nil {
			return "", err
		}
	} else if err == nil {
		staged = r.unstagedNote()
	}
	// Whatever became of the command, what it did to protected paths is
	// undone before anything else runs.
	note := staged
	switch {
	case watched:
		note += r.watch.undo(before)
	case res.Staged == nil:
		// Unwatched, yet not staged although it had to be (Cmd.MustStage):
		// an executor that breaks the contract, or one that failed it
		// (rein's own never let such a command reach the work dir). Every
		// later command is watched; one that ran is named, as nothing
		// was compared after it.
		r.unstaged.Store(true)
		if err == nil {
			note += "\n[rein: this command was not staged, and protected paths were not checked after it]"
		}
	}
	switch {
	case errors.Is(err, sandbox.ErrAborted):
		return "", fmt.Errorf("the command was stopped because the run was aborted: %w", err)
	case errors.Is(err, sandbox.ErrExecutorDead):
		return "", fmt.Errorf("%w: %s sandbox: %w", tool.ErrFatal, r.ex.Name(), err)
	case err != nil:
		return "", fmt.Errorf("the command could not be started (%w); check the working directory and try again", err)
	}
	return format(res, timeout) + note, nil
}

// stagesNow reports whether the executor stages and says it still does.
func (r *runner) stagesNow() bool {
	rep, ok := r.ex.(sandbox.StageReporter)
	return ok && rep.StageErr() == nil
}

// unstagedNote tells the model and the trace, once per session, that the
// sandbox was asked to stage writes and cannot: they went straight to the
// work dir, beyond rollback. Nothing is lost, but nothing is undoable.
func (r *runner) unstagedNote() string {
	rep, ok := r.ex.(sandbox.StageReporter)
	if !r.staged || !ok {
		return ""
	}
	why := rep.StageErr()
	if why == nil || r.told.Swap(true) {
		return ""
	}
	return "\n[rein: commands' writes are not staged in this session (" + why.Error() +
		"): they go straight to the work dir, and rein rollback cannot undo them]"
}

// lookup checks that the working directory exists and lies inside the work
// dir, for the existence gate.
func (r *runner) lookup(_ context.Context, a Args) error {
	if a.Workdir == "" || a.Workdir == "." {
		return nil // the session's own work dir; run resolves it again
	}
	_, err := resolveDir(r.root, a.Workdir)
	return err
}
