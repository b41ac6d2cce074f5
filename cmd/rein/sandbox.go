package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/sandbox/docker"
	sessionid "github.com/reinhq/rein/session"
)

type sandboxCmd struct {
	Exec   sandboxExecCmd   `cmd:"" help:"Run one command the way a run_bash call would, in a sandbox; its exit code is passed through."`
	Doctor sandboxDoctorCmd `cmd:"" help:"Say which sandbox backends work on this machine and, for the others, why not."`
	Gc     sandboxGcCmd     `cmd:"" name:"gc" help:"Remove rein's containers whose rein process is gone (after a crash)."`
}

type sandboxExecCmd struct {
	Backend string        `default:"auto" enum:"auto,landlock,docker,none" help:"auto (the strongest that works), landlock, docker or none."`
	Workdir string        `default:"." placeholder:"DIR" help:"Work directory: the only place the command may write."`
	Net     string        `default:"none" enum:"none" help:"Network: none (the only policy so far)."`
	Image   string        `placeholder:"IMAGE" help:"Container image for docker (never pulled)."`
	Runtime string        `default:"docker" enum:"docker,podman" help:"Container runtime for docker."`
	Timeout time.Duration `default:"120s" help:"Kill the command (and everything it started) after this long."`
	Memory  string        `placeholder:"SIZE" help:"Memory limit of the command (2GiB, 512MiB, none); default 2GiB."`
	Command []string      `arg:"" passthrough:"" help:"The command and its arguments (after --)."`
}

func (c *sandboxExecCmd) Run(ctx context.Context, e env) error {
	workdir, err := filepath.Abs(c.Workdir)
	if err != nil {
		return usagef("--workdir: %v", err)
	}
	if st, err := os.Stat(workdir); err != nil || !st.IsDir() {
		return usagef("--workdir: %s is not a directory", c.Workdir)
	}
	args := c.Command
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return usagef("no command: write it after --, e.g. rein sandbox exec -- ls -la")
	}
	ex, name, closer, err := guarded.OpenSandbox(ctx, guarded.Sandbox{Backend: c.Backend, Image: c.Image, Runtime: c.Runtime, Memory: c.Memory, Helper: sandboxHelper(), OneShot: true},
		workdir, sessionid.NewID(time.Now()))
	if err != nil {
		return usageError{err}
	}
	defer closer.Close()
	if name == guarded.SandboxNone {
		fmt.Fprintln(e.stderr, "rein: WARNING: --backend none: the command runs unsandboxed, with your rights")
	}
	res, err := ex.Exec(ctx, sandbox.Cmd{Script: shellQuote(args), Dir: workdir, Timeout: c.Timeout})
	if err != nil {
		if errors.Is(err, sandbox.ErrAborted) {
			return exitCode(exitAborted)
		}
		return err
	}
	fmt.Fprint(e.stdout, termsafe.Text(res.Stdout))
	fmt.Fprint(e.stderr, termsafe.Text(res.Stderr))
	switch {
	case res.TimedOut:
		fmt.Fprintf(e.stderr, "rein: killed after %v\n", c.Timeout)
		return exitCode(124)
	case res.ExitCode < 0:
		fmt.Fprintf(e.stderr, "rein: killed by %s\n", termsafe.Line(res.Signal))
		return exitCode(137)
	}
	return exitCode(res.ExitCode)
}

// shellQuote joins args into one shell command line that runs exactly them.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

type sandboxDoctorCmd struct {
	Runtime string `default:"docker" enum:"docker,podman" help:"Container runtime to check."`
}

func (c *sandboxDoctorCmd) Run(ctx context.Context, e env) error {
	working := 0
	if abi, err := sandbox.LandlockStatus(); err != nil {
		fmt.Fprintf(e.stdout, "landlock  no   %v\n", termsafe.Line(err.Error()))
	} else {
		working++
		fmt.Fprintf(e.stdout, "landlock  yes  Landlock ABI %d, seccomp, network namespace (the default)\n", abi)
		if err := sandbox.StageProbe(ctx, sandboxHelper()); err != nil {
			fmt.Fprintf(e.stdout, "staging   no   %v: commands' writes go straight to the work dir, beyond rollback\n", termsafe.Line(err.Error()))
		} else {
			fmt.Fprintln(e.stdout, "staging   yes  overlayfs: each command's writes are judged, saved for rollback, then applied")
		}
	}
	if err := docker.Available(ctx, c.Runtime); err != nil {
		fmt.Fprintf(e.stdout, "%-9s no   %v\n", termsafe.Line(c.Runtime), termsafe.Line(err.Error()))
	} else {
		working++
		fmt.Fprintf(e.stdout, "%-9s yes  daemon reachable; pass --image (nothing is ever pulled)\n", termsafe.Line(c.Runtime))
		if err := docker.StageStatus(); err != nil {
			fmt.Fprintf(e.stdout, "  staging no   %v\n", termsafe.Line(err.Error()))
		} else {
			fmt.Fprintln(e.stdout, "  staging yes  rein mounts each command's overlay in the container: judged, saved for rollback, then applied")
		}
		if err := docker.EgressStatus(); err != nil {
			fmt.Fprintf(e.stdout, "  network no   %v\n", termsafe.Line(err.Error()))
		} else {
			fmt.Fprintln(e.stdout, "  network yes  the egress proxy listens in the container's own network namespace (still --network none)")
		}
	}
	fmt.Fprintln(e.stdout, "none      yes  only when asked for with --sandbox none: commands run with your rights")
	if err := sandbox.EgressStatus(); err != nil {
		fmt.Fprintf(e.stdout, "network   no   %v; commands have no network\n", termsafe.Line(err.Error()))
	} else {
		fmt.Fprintln(e.stdout, "network   yes  landlock (and docker, above) commands reach the hosts of [sandbox.network] allow through rein's egress proxy (HTTP, CONNECT, SOCKS5)")
	}
	if working == 0 {
		fmt.Fprintln(e.stdout, "\nNo sandbox works here: run_bash will refuse to run unless you pass --sandbox none.")
		return exitCode(exitError)
	}
	return nil
}

type sandboxGcCmd struct {
	Runtime string `default:"docker" enum:"docker,podman" help:"Container runtime."`
}

func (c *sandboxGcCmd) Run(ctx context.Context, e env) error {
	removed, err := docker.GC(ctx, c.Runtime)
	for _, id := range removed {
		fmt.Fprintf(e.stdout, "removed %s\n", termsafe.Line(id))
	}
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		fmt.Fprintln(e.stdout, "nothing to remove")
	}
	return nil
}
