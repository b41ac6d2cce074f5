package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// Defaults for the zero values of Options.
const (
	DefaultRuntime   = "docker"
	DefaultNetwork   = "none"
	DefaultPidsLimit = 256
	DefaultMemory    = "1g"
	DefaultCPUs      = "1"
	DefaultTmpSize   = "64m"
)

// MaxStdin is the largest Cmd.Stdin the backend passes on.
const MaxStdin = 96 << 10

// Labels put on every container rein starts.
const (
	LabelSession = "rein.session" // the session id; its presence marks rein's containers
	LabelPID     = "rein.pid"     // the pid of the rein process that started it
	LabelBoot    = "rein.boot"    // the host's boot id (Linux)
	LabelStart   = "rein.start"   // that process's start time, in clock ticks since boot (Linux)
	LabelHost    = "rein.host"    // the host name of the machine rein runs on
)

// ErrNoImage marks a Start whose image is not on the machine. rein never
// pulls one: build or load it first.
var ErrNoImage = errors.New("container image not found locally")

// Timeouts of the client calls that have no caller's deadline.
const (
	startTimeout  = 60 * time.Second // docker run, when ctx has no deadline
	removeTimeout = 30 * time.Second // docker rm -f
	signalTimeout = 10 * time.Second // the fallback docker exec kill
	killWait      = 5 * time.Second  // for the client to end once its command was killed
)

// Options configure Start.
type Options struct {
	// Runtime is the container command line: "docker" (the default),
	// "podman", or a path to either.
	Runtime string
	// Image is the image to run; required. It must be on the machine.
	Image string
	// WorkDir is the absolute work dir, bind-mounted read-write at the same
	// path. It must not be, or hold, a home directory, nor lie in a
	// credential or system directory.
	WorkDir string
	// Session is the session id, put on the container as label
	// rein.session. Empty means a random id.
	Session string
	// Network is the container's network; empty means "none". "host" and
	// "container:…" are refused.
	Network string
	// Env is the environment of a command whose Cmd.Env is nil. Nil means
	// DefaultEnv().
	Env []string
	// PidsLimit bounds the processes in the container; 0 means 256.
	PidsLimit int
	// Memory bounds the container's memory, swap included, in docker's
	// notation ("512m", "2g"); empty means "1g".
	Memory string
	// CPUs bounds the CPUs the container may use ("0.5", "2"); empty
	// means "1".
	CPUs string
	// TmpSize is the size of the tmpfs on /tmp; empty means "64m".
	TmpSize string
	// MaxOutput is how many bytes of each of stdout and stderr are kept;
	// 0 means sandbox.DefaultMaxOutput.
	MaxOutput int
	// Grace is how long a timed-out command has between SIGTERM and
	// SIGKILL; 0 means sandbox.DefaultGrace, a negative value kills at
	// once. An aborted command is killed at once regardless.
	Grace time.Duration
	// Stage stages each command's writes (Result.Staged, see
	// sandbox.Staged), as the landlock backend does: rein mounts an
	// overlay over the work dir in the container's mount namespace for
	// the command and reads its upper dir when it ends. It needs rein to
	// run as root on Linux with overlayfs taking layers by descriptor;
	// where it cannot, commands write straight to the work dir and
	// StageErr says why.
	Stage bool
	// Egress, when set, gives commands the network through it and nothing
	// else: rein listens on sandbox.ProxyAddr inside the container's
	// network namespace (which keeps --network none: its loopback only)
	// and every command gets sandbox.ProxyEnv. It needs rein to run as
	// root on Linux; Start fails otherwise.
	Egress sandbox.EgressServer
}

// DefaultEnv is the environment of a command in the container when neither
// Cmd.Env nor Options.Env says otherwise: sandbox.ChildEnv of nothing of
// rein's environment, as Inside places it (HOME and TMPDIR on the tmpfs, so
// that caches do not land in the work dir; the image's standard PATH).
func DefaultEnv() []string {
	return sandbox.ChildEnv(nil, Inside())
}

// Inside is how a command in the container sees its environment, for
// sandbox.ChildEnv: the host's HOME, TMPDIR and PATH mean nothing there.
func Inside() sandbox.Inside {
	return sandbox.Inside{Home: "/tmp", TmpDir: "/tmp", Path: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
}

// Executor runs commands in one container. It is safe for concurrent use.
// Close it when the session ends.
type Executor struct {
	runtime   string   // the client's path
	name      string   // "docker", "podman"
	id        string   // the container id
	workDir   string   // as seen in the container
	user      string   // uid:gid of commands
	env       []string // a command's environment when Cmd.Env is nil
	clientEnv []string // the client's own environment
	maxOutput int
	grace     time.Duration
	opts      Options // as checked by Start, to start the container again
	src       string  // the work dir's real path, bind-mounted
	masks     maskSource
	memLimit  int64      // Options.Memory in bytes, for OOM reports
	stageRoot string     // where staged commands' upper dirs go; "" unstaged
	stageLock *os.File   // held on stageRoot until it is removed
	stageMu   sync.Mutex // staged commands run one at a time

	mu       sync.Mutex
	ns       *nsState      // what rein serves in the current container's namespaces
	maskList sandbox.Masks // the masks found for the current container, mounted again over each overlay
	stageErr error         // why commands are not staged although Stage asked
	oom      string        // the container's OOM kill counter file; "" if unknown
	closed   bool
	restarts int   // containers started to replace a dead one
	dead     error // set once a restart failed: wraps sandbox.ErrExecutorDead
}

var _ sandbox.Executor = (*Executor)(nil)

// Name returns the runtime's name, "docker" or "podman".
func (e *Executor) Name() string { return e.name }

// ID returns the container's id.
func (e *Executor) ID() string { return e.containerID() }

func (e *Executor) containerID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.id
}

// oomCounter returns the current container's OOM kill counter file.
func (e *Executor) oomCounter() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.oom
}

func (e *Executor) deadErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dead
}

// running reports whether container id runs, as the client tells; a client
// that cannot tell (the daemon is down) says no.
func (e *Executor) running(ctx context.Context, id string) bool {
	ictx, cancel := context.WithTimeout(ctx, signalTimeout)
	defer cancel()
	out, err := e.run(ictx, "inspect", "--format", "{{.State.Running}}", id)
	return err == nil && strings.TrimSpace(out) == "true"
}

// restart replaces the dead container id with a new one, once: a second
// death, or a restart that fails, leaves the executor dead.
func (e *Executor) restart(ctx context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.dead != nil:
		return e.dead
	case e.closed:
		return fmt.Errorf("%w: the sandbox container was removed", sandbox.ErrStart)
	case e.id != id:
		return nil // another Exec restarted it already
	case e.restarts >= 1:
		e.dead = fmt.Errorf("%w: the %s container died again after its restart; no command can run", sandbox.ErrExecutorDead, e.name)
		return e.dead
	}
	e.restarts++
	_ = e.remove(id)
	e.ns.close()
	e.ns = nil
	newID, err := e.create(ctx)
	if err == nil {
		e.id = newID
		e.oom = e.oomFile(ctx, newID)
		e.mu.Unlock()
		ns, nerr := e.enter(ctx, newID)
		e.mu.Lock()
		e.ns = ns
		if nerr != nil {
			err = nerr
		}
	}
	if err == nil {
		var res sandbox.Result
		e.mu.Unlock()
		res, err = e.execOnce(ctx, sandbox.Cmd{Script: ":", Dir: e.workDir, Env: []string{}, Timeout: startTimeout})
		e.mu.Lock()
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
		}
	}
	if err != nil {
		e.dead = fmt.Errorf("%w: the %s container died and starting a new one failed: %w", sandbox.ErrExecutorDead, e.name, err)
		return e.dead
	}
	return nil
}

// Start starts the session's container and returns once a command can run
// in it. Errors wrap sandbox.ErrInvalid (bad options), sandbox.ErrUnsupported
// (no runtime), ErrNoImage, or sandbox.ErrStart.
func Start(ctx context.Context, o Options) (*Executor, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	src, err := checkWorkDir(o.WorkDir, homeDir())
	if err != nil {
		return nil, err
	}
	rt, err := exec.LookPath(o.Runtime)
	if err != nil {
		return nil, fmt.Errorf("%w: container runtime %q: %w", sandbox.ErrUnsupported, o.Runtime, err)
	}
	e := &Executor{
		runtime:   rt,
		name:      filepath.Base(o.Runtime),
		workDir:   o.WorkDir,
		user:      userSpec(),
		env:       o.Env,
		clientEnv: clientEnv(os.Environ()),
		maxOutput: o.MaxOutput,
		grace:     o.Grace,
	}
	if _, err := e.run(ctx, "image", "inspect", "--format", "{{.Id}}", o.Image); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", sandbox.ErrStart, context.Cause(ctx))
		}
		if isNoSuchImage(err) {
			return nil, fmt.Errorf("%w: %w: %q (rein never pulls; build or load it first): %w", sandbox.ErrStart, ErrNoImage, o.Image, err)
		}
		return nil, fmt.Errorf("%w: looking for image %q: %w", sandbox.ErrStart, o.Image, err)
	}
	e.opts, e.src = o, src
	if e.memLimit, err = sandbox.ParseMemory(o.Memory); err != nil {
		return nil, fmt.Errorf("%w: %w", sandbox.ErrInvalid, err)
	}
	if o.Egress != nil {
		if o.Network != DefaultNetwork {
			return nil, fmt.Errorf("%w: the egress proxy needs network %q, not %q", sandbox.ErrInvalid, DefaultNetwork, o.Network)
		}
		if err := egressSupported(); err != nil {
			return nil, fmt.Errorf("%w: %w", sandbox.ErrUnsupported, err)
		}
	}
	sandbox.SweepHeld() // what killed reins left in the temp dir
	if o.Stage {
		if err := e.initStage(); err != nil {
			e.stageErr = err
		}
	}
	if e.masks, err = newMaskSource(); err != nil {
		e.removeStageRoot()
		return nil, fmt.Errorf("%w: %w", sandbox.ErrStart, err)
	}
	if e.id, err = e.create(ctx); err != nil {
		e.masks.remove()
		e.removeStageRoot()
		return nil, err
	}
	e.oom = e.oomFile(ctx, e.id)
	if e.ns, err = e.enter(ctx, e.id); err != nil {
		e.Close()
		return nil, fmt.Errorf("%w: %w", sandbox.ErrStart, err)
	}
	res, err := e.Exec(ctx, sandbox.Cmd{Script: ":", Dir: o.WorkDir, Env: []string{}, Timeout: startTimeout})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("%w: the image cannot run the command wrapper (exit %d): %s", sandbox.ErrStart, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// create runs a new container for e and returns its id.
func (e *Executor) create(ctx context.Context) (string, error) {
	name := "rein-" + randomHex(6)
	// Found afresh for every container: a restart masks what the session
	// has made since.
	masks := sandbox.FindMasks(e.src, "")
	mounts, err := maskMounts(masks, e.src, e.opts.WorkDir, e.masks)
	if err != nil {
		return "", err
	}
	e.maskList = masks
	work, err := mountFlag(e.src, e.opts.WorkDir, false)
	if err != nil {
		return "", err
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		runCtx, cancel = context.WithTimeout(ctx, startTimeout)
	}
	out, err := e.run(runCtx, runArgs(e.opts, work, name, currentOwner(), e.rootless(), mounts)...)
	cancel()
	if err != nil {
		// The container may exist even though the client failed (it was
		// cancelled, say): remove it by name.
		e.remove(name)
		return "", fmt.Errorf("%w: %s run: %w", sandbox.ErrStart, e.name, err)
	}
	id := strings.TrimSpace(out)
	if !isHexID(id) {
		e.remove(name)
		return "", fmt.Errorf("%w: %s run printed %q, not a container id", sandbox.ErrStart, e.name, id)
	}
	return id, nil
}

// Close removes the container and whatever still runs in it. It is safe to
// call more than once; Exec after Close fails with sandbox.ErrStart.
func (e *Executor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	defer e.masks.remove()
	defer e.removeStageRoot()
	err := e.remove(e.id)
	e.ns.close()
	e.ns = nil
	return err
}

func (e *Executor) removeStageRoot() {
	if e.stageRoot != "" {
		sandbox.RemoveStageDir(e.stageRoot)
	}
	if e.stageLock != nil {
		_ = e.stageLock.Close()
	}
}

// nsNow returns what rein serves in the current container, and the
// container's masks.
func (e *Executor) nsNow() (*nsState, sandbox.Masks) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ns, e.maskList
}

// StageErr says why commands are not staged although Options.Stage asked
// for it (not root, no overlay here, mounting it in the container
// failed); nil when they are, or when Stage was not asked for.
func (e *Executor) StageErr() error { return e.stageErrNow() }

func (e *Executor) stageErrNow() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stageErr
}

// notStaging says why a command asked to run staged (Cmd.MustStage) is
// not: the executor does not stage now.
func (e *Executor) notStaging() error {
	if !e.opts.Stage {
		return fmt.Errorf("the %s sandbox was not asked to stage its commands (Options.Stage)", e.name)
	}
	if why := e.stageErrNow(); why != nil {
		return fmt.Errorf("%w; commands run unstaged from now on", why)
	}
	return fmt.Errorf("the %s sandbox does not stage its commands here", e.name)
}

// stageFailed turns staging off for the executor's life.
func (e *Executor) stageFailed(why error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stageErr == nil {
		e.stageErr = why
	}
}

// kill makes the executor dead with why and removes its container: what
// runs in it can no longer be trusted to be confined as described.
func (e *Executor) kill(why error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead == nil {
		e.dead = why
	}
	_ = e.remove(e.id)
}

func (e *Executor) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// remove removes a container by id or name; one that is already gone is no
// error.
func (e *Executor) remove(ref string) error {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	if _, err := e.run(ctx, "rm", "-f", ref); err != nil && !isNoSuchContainer(err) {
		return fmt.Errorf("removing container %s: %w", ref, err)
	}
	return nil
}

// rootless reports whether podman runs without root, where the user's uid
// is kept by mapping it into the container's user namespace.
func (e *Executor) rootless() bool {
	return e.name == "podman" && os.Geteuid() != 0
}

// run runs the client with args and returns its stdout; a failure carries
// the client's stderr.
func (e *Executor) run(ctx context.Context, args ...string) (string, error) {
	return runClient(ctx, e.runtime, e.clientEnv, args...)
}

func runClient(ctx context.Context, rt string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, rt, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		return stdout.String(), &clientError{args: args, msg: msg, err: err}
	}
	return stdout.String(), nil
}

// clientError is a failed client call.
type clientError struct {
	args []string
	msg  string
	err  error
}

func (e *clientError) Error() string {
	verb := strings.Join(e.args[:min(2, len(e.args))], " ")
	if e.msg == "" {
		return fmt.Sprintf("%s: %v", verb, e.err)
	}
	return fmt.Sprintf("%s: %v: %s", verb, e.err, e.msg)
}

func (e *clientError) Unwrap() error { return e.err }

func isNoSuchContainer(err error) bool {
	var ce *clientError
	if !errors.As(err, &ce) {
		return false
	}
	m := strings.ToLower(ce.msg)
	return strings.Contains(m, "no such container") || strings.Contains(m, "no container with name or id") ||
		strings.Contains(m, "is already in progress")
}

// initUser runs the container's init and its `sleep infinity`: nobody, a
// user other than the one commands run as, so that no command can read
// their memory or environment, or signal them.
const initUser = "65534:65534"

// userSpec is the uid:gid commands run as: rein's own, so that files they
// write in the work dir belong to the user.
func userSpec() string { return strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid()) }

func isNoSuchImage(err error) bool {
	var ce *clientError
	if !errors.As(err, &ce) {
		return false
	}
	m := strings.ToLower(ce.msg)
	return strings.Contains(m, "no such image") || strings.Contains(m, "image not known") || strings.Contains(m, "failed to find image")
}

// runArgs builds `docker run` for o.
// work is the work dir's --mount flag (mountFlag), mounts further ones
// (maskMounts).
func runArgs(o Options, work, name string, own owner, rootless bool, mounts []string) []string {
	args := []string{
		"run", "--detach", "--rm", "--pull=never", "--init",
		"--name=" + name,
		"--label=" + LabelSession + "=" + o.Session,
		"--label=" + LabelPID + "=" + strconv.Itoa(own.pid),
		"--label=" + LabelHost + "=" + own.host,
	}
	if own.boot != "" {
		args = append(args, "--label="+LabelBoot+"="+own.boot, "--label="+LabelStart+"="+own.start)
	}
	args = append(args,
		"--user="+initUser, // commands run as the user (Exec); init may not be traced or signalled by them
		"--network="+o.Network,
		"--cap-drop=ALL",
		"--security-opt=no-new-privileges",
		"--pids-limit="+strconv.Itoa(o.PidsLimit),
		"--memory="+o.Memory,
		"--memory-swap="+o.Memory,
		"--cpus="+o.CPUs,
		"--read-only",
		"--tmpfs=/tmp:rw,nosuid,nodev,size="+o.TmpSize+",mode=1777",
		work,
	)
	args = append(args, mounts...)
	args = append(args,
		"--workdir=/",
		"--ipc=private",
		"--log-driver=none",
		"--entrypoint=sleep",
	)
	if rootless {
		args = append(args, "--userns=keep-id")
	}
	return append(args, "--", o.Image, "infinity")
}

// withDefaults checks o and fills its zero values.
func (o Options) withDefaults() (Options, error) {
	if o.Runtime == "" {
		o.Runtime = DefaultRuntime
	}
	if o.Network == "" {
		o.Network = DefaultNetwork
	}
	if o.PidsLimit == 0 {
		o.PidsLimit = DefaultPidsLimit
	}
	if o.Memory == "" {
		o.Memory = DefaultMemory
	}
	if o.CPUs == "" {
		o.CPUs = DefaultCPUs
	}
	if o.TmpSize == "" {
		o.TmpSize = DefaultTmpSize
	}
	if o.Session == "" {
		o.Session = randomHex(8)
	}
	if o.Env == nil {
		o.Env = DefaultEnv()
	}
	bad := func(format string, a ...any) (Options, error) {
		return o, fmt.Errorf("%w: %s", sandbox.ErrInvalid, fmt.Sprintf(format, a...))
	}
	switch {
	case o.Image == "":
		return bad("no image given")
	case strings.HasPrefix(o.Image, "-"):
		return bad("image %q starts with a dash", o.Image)
	case o.Network == "host" || strings.HasPrefix(o.Network, "container:") || strings.HasPrefix(o.Network, "ns:"):
		return bad("network %q would share a namespace with the host or another container", o.Network)
	case o.PidsLimit < 0:
		return bad("negative pids limit %d", o.PidsLimit)
	case o.MaxOutput < 0:
		return bad("negative output cap %d", o.MaxOutput)
	}
	for _, f := range []struct{ name, v string }{
		{"session", o.Session}, {"network", o.Network}, {"memory", o.Memory}, {"cpus", o.CPUs}, {"tmp size", o.TmpSize},
	} {
		if strings.ContainsAny(f.v, ",=\"'\n\r\x00 ") {
			return bad("%s %q holds a character the runtime's flags cannot carry", f.name, f.v)
		}
	}
	if err := checkEnv(o.Env); err != nil {
		return o, err
	}
	return o, nil
}

// checkEnv refuses entries the client would misread: without "=", `--env
// NAME` would copy NAME from the client's own environment.
func checkEnv(env []string) error {
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(kv, "\x00") {
			return fmt.Errorf("%w: environment entry %q is not NAME=value", sandbox.ErrInvalid, kv)
		}
	}
	return nil
}

// clientEnvNames are the variables of rein's environment the client gets.
var clientEnvNames = []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LC_ALL",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"}

// clientEnvPrefixes are prefixes of further variables the client gets.
var clientEnvPrefixes = []string{"DOCKER_", "CONTAINER_", "CONTAINERS_", "PODMAN_", "XDG_", "DBUS_"}

// clientEnv keeps of env what the runtime's client needs to find its
// daemon and configuration.
func clientEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keep := false
		for _, n := range clientEnvNames {
			keep = keep || k == n
		}
		for _, p := range clientEnvPrefixes {
			keep = keep || strings.HasPrefix(k, p)
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

func isHexID(s string) bool {
	if len(s) < 12 || len(s) > 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && len(s)%2 == 0
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}
