// Package sandbox runs shell commands for rein's tools through an Executor:
// one script, one working directory, a complete environment, a timeout, and
// captured output of bounded size. Every backend keeps the same contract, so
// a tool written against Executor runs unchanged on the local machine, in a
// landlock+seccomp helper or in a container.
//
// Local runs the script with the host's shell in its own process group and
// kills the whole group when the script ends, times out or is aborted. It
// isolates nothing: the command runs as rein's user, sees rein's file system
// and network. What it may do is bounded by the gates before it runs (the
// shell, scope and network gates), not by Local.
//
// Landlock (Linux) runs the same way, but the kernel confines the command:
// rein re-executes itself as a helper (HelperMain) that applies a Landlock
// ruleset, a seccomp filter, a network namespace and limits, then becomes a
// zygote that forks each command's shell with all of them in force. It reads the system, writes only the work dir and a private temp
// dir, and reaches no network, no other process and no credential.
// LandlockStatus says whether it works on this machine; when it does not,
// rein refuses to run action tools unless the user chose no sandbox.
//
// The package never decides whether a command may run, never parses the
// script and never hands the parent's whole environment to a command.
package sandbox

import (
	"context"
	"errors"
	"os"
	"time"
)

// Defaults a backend applies when a Cmd or its own settings leave a value zero.
const (
	DefaultTimeout   = 120 * time.Second // Cmd.Timeout
	DefaultMaxOutput = 64 << 10          // bytes kept of each of stdout and stderr
	DefaultGrace     = 2 * time.Second   // from SIGTERM to SIGKILL on a timeout
)

// Cmd is one command to run.
type Cmd struct {
	// Script is a shell script, run by the backend's shell as `sh -c Script`.
	Script string
	// Dir is the absolute working directory. The caller has already checked
	// that it lies inside the work dir; a backend refuses a relative one.
	Dir string
	// Env is the complete environment of the command. Nil means MinimalEnv;
	// an empty, non-nil slice means no variables at all. A backend never adds
	// the parent's environment.
	Env []string
	// Timeout bounds the run; 0 means DefaultTimeout. At the deadline the
	// whole process group is stopped: SIGTERM, then SIGKILL after a grace.
	Timeout time.Duration
	// Stdin is the command's standard input; empty means /dev/null.
	Stdin string
	// MustStage asks for the command to run staged (Result.Staged set) or
	// not at all: a backend that does not stage it now — it cannot, it
	// stopped staging, it was never asked to — runs nothing and returns an
	// error wrapping ErrNotStaged. A caller that skips its own watch of the
	// work dir because the command is staged sets it, so that no command
	// it did not watch ever writes straight to the work dir.
	MustStage bool
}

// Result is what a command did. A non-zero exit, a kill by a signal and a
// timeout are all results, not errors.
type Result struct {
	// Stdout and Stderr are the captured output, each at most the backend's
	// output cap: when longer, the head and the tail are kept with a
	// "[… N bytes cut …]" line between them.
	Stdout, Stderr string
	// StdoutBytes and StderrBytes are the full sizes written.
	StdoutBytes, StderrBytes int64
	// ExitCode is the shell's exit status, or -1 when a signal killed it.
	ExitCode int
	// Signal names the signal that killed the shell ("killed",
	// "terminated"), or is empty.
	Signal string
	// TimedOut reports that the run reached its timeout and was stopped.
	TimedOut bool
	// OOMKilled reports that the kernel killed a process of the command
	// for reaching the sandbox's memory limit, MemoryLimit bytes.
	OOMKilled   bool
	MemoryLimit int64
	// Duration is the time from start to the shell's end.
	Duration time.Duration
	// Staged holds the command's writes when the backend staged them
	// (Landlock.Stage): they are not in the work dir until the caller
	// applies them. Nil when the backend wrote through.
	Staged *Staged
}

// Cut reports whether any output was cut to fit the cap.
func (r Result) Cut() bool {
	return r.StdoutBytes > int64(len(r.Stdout)) || r.StderrBytes > int64(len(r.Stderr))
}

// Executor runs commands. Implementations are safe for concurrent use.
//
// Exec returns an error only when the command could not be started (wrapping
// ErrInvalid, ErrStart, ErrUnsupported or ErrExecutorDead) or was aborted because ctx ended
// (wrapping ErrAborted and context.Cause(ctx)); on abort the Result holds
// what the command did until then. When Exec returns, no process it started
// in the command's process group is left running.
type Executor interface {
	// Name names the backend, like "local".
	Name() string
	Exec(ctx context.Context, c Cmd) (Result, error)
}

// StageReporter is an Executor asked to stage its commands' writes
// (Landlock.Stage, docker's Options.Stage) that can say why it does not:
// StageErr is nil while it stages (or before it knows), else the reason
// its commands write straight to the work dir. StageErr is advice, read
// before a command that may race with the executor turning staging off;
// the guarantee is Cmd.MustStage: such a command comes back with Staged
// set, or did not run (ErrNotStaged). A caller that relies on staging
// (tool/bash skips its own watch of protected paths) sets it, and so never
// gets an unstaged command it did not watch.
type StageReporter interface {
	StageErr() error
}

// Errors Exec wraps, for callers to branch on with errors.Is.
var (
	// ErrInvalid marks a Cmd the backend refuses as given (a relative Dir,
	// a negative Timeout).
	ErrInvalid = errors.New("invalid command")
	// ErrStart marks a command that could not be started (no such
	// directory, no shell, out of processes).
	ErrStart = errors.New("command could not be started")
	// ErrAborted marks a command stopped because its context ended.
	ErrAborted = errors.New("command aborted")
	// ErrUnsupported marks a backend that does not run on this system.
	ErrUnsupported = errors.New("executor not supported on this system")
	// ErrExecutorDead marks an executor that cannot run commands any more:
	// its sandbox (the zygote, the container) died, was restarted once,
	// and the restart failed or died too. It is the caller's failure, not
	// the command's: no later command will run either.
	ErrExecutorDead = errors.New("the sandbox is dead and could not be restarted")
	// ErrNotStaged marks a command that did not run because it could not
	// be staged: its overlay could not be mounted (the executor runs its
	// commands unstaged from then on, and StageErr says why), or the
	// caller asked for staging (Cmd.MustStage) of an executor that does
	// not stage. The caller may run it again, unstaged.
	ErrNotStaged = errors.New("the command's writes could not be staged, so it did not run")
)

// defaultPath is PATH when rein's own environment has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// MinimalEnv returns the environment a command gets when Cmd.Env is nil:
// ChildEnv of rein's own environment, run on the host (PATH and HOME taken
// from it with defaults, USER, LANG, LC_ALL, TERM=dumb, TMPDIR). Nothing
// else of rein's environment is passed on, so API keys and tokens in it
// stay out of commands. Landlock then moves HOME and TMPDIR into its
// private temp dir.
func MinimalEnv() []string {
	return ChildEnv(os.Environ(), Inside{})
}
