package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/gate/shell"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/sandbox/docker"
)

// The sandbox backends a session can ask for.
const (
	SandboxAuto     = "auto"     // the strongest that works here: landlock, else docker (with an image)
	SandboxLandlock = "landlock" // Landlock + seccomp + namespaces around each command
	SandboxDocker   = "docker"   // a container per session (podman: Runtime "podman")
	SandboxNone     = "none"     // commands run with the user's rights: only when asked for
)

// Sandbox chooses how commands run.
type Sandbox struct {
	Backend string // one of the Sandbox* constants; "" means auto
	Image   string // the container image, for docker
	Runtime string // "docker" (default) or "podman"
	Memory  string // each command's memory limit ("2GiB", "none"); "" the default
	// Helper is a binary whose main calls sandbox.HelperMain: the
	// landlock backend's helper (empty: this program) and, for --sandbox
	// none, each command's reaper, which kills everything it started when
	// it ends or rein dies (empty: no reaper, a process group kill only).
	Helper string
	// NoStage runs landlock commands unstaged: their writes go straight
	// to the work dir, beyond rollback's reach. By default each command's
	// writes are staged in an overlay, judged, saved for rollback and
	// then applied (sandbox.Landlock.Stage, bash.Staging).
	NoStage bool
	// StageAskAbove is bash.Staging.AskAbove: how many files one command
	// may change or delete before rein asks; 0 means the default.
	StageAskAbove int
	// Egress, when its allowlist is not empty, gives commands the network
	// through rein's egress proxy ([sandbox.network]); its Record is where
	// each connection is reported (the session sets it to the audit log).
	// Nil or an empty allowlist: no network. Landlock and docker take it
	// alike (a container keeps --network none; the proxy listens inside
	// its namespace).
	Egress *egress.Config
	// OneShot opens the executor for one command (`rein sandbox exec`):
	// landlock runs it through a helper of its own, unstaged, instead of
	// starting a zygote for later commands that never come.
	OneShot bool
	// Warm starts the landlock zygote as the executor opens
	// (sandbox.Landlock.Warm).
	Warm bool
	// Hold is sandbox.Landlock.Hold: the landlock executor's setup and a
	// Warm start wait for it to close (Run closes it as the first model
	// request goes out). Nil: they start as the executor opens.
	Hold <-chan struct{}
}

// landlock is the landlock executor s asks for, not yet prepared.
func (s Sandbox) landlock(workdir string, mem int64) *sandbox.Landlock {
	return &sandbox.Landlock{Helper: s.Helper, WorkDir: workdir, Memory: mem, Stage: !s.NoStage && !s.OneShot, PerCommand: s.OneShot, Hold: s.Hold,
		Simple: cmdline.Simple}
}

// withNetwork gives l the egress proxy s asks for: nothing when none is
// asked for, an error when this process cannot serve it (not root).
func (s Sandbox) withNetwork(l *sandbox.Landlock) error {
	p, err := s.proxy()
	if p == nil || err != nil {
		return err
	}
	l.Net, l.Egress = sandbox.NetProxy, p
	return nil
}

// proxy is the egress proxy s asks for; nil when none is.
func (s Sandbox) proxy() (*egress.Proxy, error) {
	if s.Egress == nil || len(s.Egress.Allow) == 0 {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("[sandbox.network] allow needs rein to run as root (rein listens for the egress proxy inside the sandbox's network namespace); remove the allowlist to run commands without network")
	}
	return egress.New(*s.Egress)
}

// docker is the docker executor's options s asks for.
func (s Sandbox) docker(workdir, session, mem string) (docker.Options, error) {
	o := docker.Options{Runtime: s.Runtime, Image: s.Image, WorkDir: workdir, Session: session, Memory: mem,
		Stage: !s.NoStage && !s.OneShot}
	p, err := s.proxy()
	if err != nil {
		return o, err
	}
	if p != nil {
		o.Egress = p
	}
	return o, nil
}

// unavailable is the executor of a session that has no sandbox and did not
// ask to run without one: every command is refused, with the reason.
type unavailable struct{ why error }

func (u unavailable) Name() string { return "unavailable" }

func (u unavailable) Exec(context.Context, sandbox.Cmd) (sandbox.Result, error) {
	return sandbox.Result{}, fmt.Errorf("%w: no sandbox is available here (%v), so commands are refused; "+
		"the user can run rein sandbox doctor, or pass --sandbox none to run commands unsandboxed", sandbox.ErrStart, u.why)
}

// OpenExecutor returns the session's executor, what it is (for the audit
// log), and a closer. A backend that was asked for and does not work is an
// error; auto with nothing working is the unavailable executor (fail closed).
func OpenExecutor(ctx context.Context, s Sandbox, workdir, session string) (sandbox.Executor, string, io.Closer, error) {
	mem, err := sandbox.ParseMemory(s.Memory)
	if err != nil {
		return nil, "", nil, fmt.Errorf("sandbox memory: %w", err)
	}
	if mem == 0 {
		mem = sandbox.DefaultMemory
	}
	dmem := strconv.FormatInt(mem, 10) // docker: bytes
	if mem < 0 {
		dmem = "0" // docker: unlimited
	}
	switch s.Backend {
	case SandboxNone:
		return &sandbox.Local{Helper: s.Helper}, SandboxNone, nopCloser{}, nil
	case SandboxLandlock:
		l := s.landlock(workdir, mem)
		if err := s.withNetwork(l); err != nil {
			return nil, "", nil, fmt.Errorf("--sandbox landlock: %w", err)
		}
		if err := l.Prepare(ctx); err != nil {
			_ = l.Close()
			return nil, "", nil, fmt.Errorf("--sandbox landlock: %w", err)
		}
		if s.Warm {
			l.Warm(ctx)
		}
		return l, SandboxLandlock, l, nil
	case SandboxDocker:
		if s.Image == "" {
			return nil, "", nil, errors.New("--sandbox docker needs --image (no image is ever pulled)")
		}
		o, err := s.docker(workdir, session, dmem)
		if err != nil {
			return nil, "", nil, fmt.Errorf("--sandbox docker: %w", err)
		}
		d, err := docker.Start(ctx, o)
		if err != nil {
			return nil, "", nil, fmt.Errorf("--sandbox docker: %w", err)
		}
		return d, d.Name(), d, nil
	case SandboxAuto, "":
		l := s.landlock(workdir, mem)
		if err := s.withNetwork(l); err != nil {
			return nil, "", nil, fmt.Errorf("sandbox: %w", err)
		}
		lerr := l.Prepare(ctx)
		if lerr == nil {
			return l, SandboxLandlock, l, nil
		}
		_ = l.Close()
		if s.Image != "" {
			o, derr := s.docker(workdir, session, dmem)
			var d *docker.Executor
			if derr == nil {
				d, derr = docker.Start(ctx, o)
			}
			if derr == nil {
				return d, d.Name(), d, nil
			}
			lerr = errors.Join(lerr, derr)
		}
		return unavailable{lerr}, "unavailable", nopCloser{}, nil
	}
	return nil, "", nil, fmt.Errorf("unknown sandbox %q: use auto, landlock, docker or none", s.Backend)
}

// Capabilities returns what the backend OpenExecutor chose (its second
// result) lets a command do, for the shell analyzer, which then judges a
// command as that sandbox will run it. Landlock and containers (started
// here always with network "none") stop every connection; a container's
// /tmp is a tmpfs of its own, while landlock's private temp dir has a path
// only known when it runs, so only the work dir is writable there. Any
// other backend (none, unavailable) is no sandbox: the strictest reading.
func Capabilities(backend string) shell.Executor {
	switch backend {
	case SandboxLandlock:
		return shell.Executor{Sandboxed: true}
	case SandboxDocker, "podman":
		return shell.Executor{Sandboxed: true, TmpDir: "/tmp"}
	}
	return shell.Executor{}
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// releaseAtFirstCall returns m, closing hold as its first request goes out.
func releaseAtFirstCall(m model.Model, hold chan<- struct{}) model.Model {
	return &firstCall{Model: m, hold: hold}
}

// firstCall closes hold at the first Generate.
type firstCall struct {
	model.Model
	once sync.Once
	hold chan<- struct{}
}

func (f *firstCall) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	f.once.Do(func() { close(f.hold) })
	return f.Model.Generate(ctx, req)
}

// Name is the model's name, when it has one (agent.Config.ModelName).
func (f *firstCall) Name() string {
	if n, ok := f.Model.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}
