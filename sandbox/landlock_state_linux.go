//go:build linux

package sandbox

// How a landlock executor's shared state comes to be: Prepare checks what
// can be refused and starts a build in the background, held back by
// Landlock.Hold; setup (a command, Warm, StageErr) takes it or builds it;
// Close stops it.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Prepare makes sure the backend works here and starts building what
// every command shares (the rulesets, the credential masks, the private
// temp dir), so that the check's work is not thrown away (LandlockStatus
// builds a namespace only to close it).
//
// What this machine or the settings can refuse is checked before Prepare
// returns: Landlock's ABI, user namespaces (not root) or seccomp and the
// network namespace, with the egress proxy in it (root), the network
// policy, the work dir and the helper. The rest — the walks of the work dir
// for credential files and of /etc for unreadable ones, the rulesets, the
// temp dirs — is built in the background, once Hold lets it, while the
// caller goes on to its first model request; a command, Warm and StageErr
// wait for it, and a failure there is the first command's error (ErrStart);
// the next command builds again. Close stops a build in progress. The
// zygote still starts at the first command unless Warm is called: started
// here, every idle session of a server would keep a process of its own.
func (l *Landlock) Prepare(ctx context.Context) error {
	root := os.Geteuid() == 0
	if !root {
		// Not root: each command gets a user namespace; probe that one can
		// be made (the state below builds none).
		if _, err := LandlockStatus(); err != nil {
			return err
		}
	} else if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("%w: seccomp: %w", ErrUnsupported, err)
	}
	set, err := l.settings()
	if err != nil {
		return err
	}
	if root {
		// The executor's network namespace, and the proxy in it, are made
		// now: a machine that refuses them refuses the backend here, where
		// --sandbox auto can still choose another.
		if err := set.network(l.Egress); err != nil {
			return err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.state != nil || l.building != nil {
		set.release()
		if l.closed {
			return errClosed()
		}
		return nil
	}
	l.startBuild(set, l.Hold)
	return nil
}

// stateBuild is a build of the executor's shared state in the background.
type stateBuild struct {
	now     chan struct{} // closed when the state is needed: build now
	nowOnce sync.Once
	stop    context.CancelFunc // Close: stop the walks, build nothing
	done    chan struct{}      // closed when st or err is set
	st      *landlockState
	err     error
}

// need starts the build if Hold still holds it back.
func (b *stateBuild) need() { b.nowOnce.Do(func() { close(b.now) }) }

// startBuild starts building the state for set in the background, once
// hold is closed (nil: at once) or a caller needs it. Called with l.mu
// held, with neither a state nor a build; set's namespace and proxy, if
// any, are the build's from here on.
func (l *Landlock) startBuild(set landlockSettings, hold <-chan struct{}) {
	ctx, stop := context.WithCancel(context.Background())
	b := &stateBuild{done: make(chan struct{}), now: make(chan struct{}), stop: stop}
	l.building = b
	l.inflight.Add(1) // Close waits for the build
	go func() {
		defer l.inflight.Done()
		defer close(b.done)
		defer stop()
		select {
		case <-hold: // nil: never, and b.now decides
		case <-b.now:
		}
		if ctx.Err() != nil {
			set.release()
			b.err = errClosed()
			return
		}
		b.st, b.err = l.buildState(ctx, set)
	}()
	if hold == nil {
		b.need()
	}
}

// built waits for the build in progress, if any, and returns the
// executor's state, nil if there is none; a failed build's error is
// returned once, to the first caller. Called without l.mu.
func (l *Landlock) built() (*landlockState, error) {
	l.mu.Lock()
	b := l.building
	l.mu.Unlock()
	if b != nil {
		b.need()
		<-b.done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b != nil && l.building == b { // not taken by another caller or Close
		l.building = nil
		if b.err != nil {
			return nil, b.err
		}
		if l.state != nil { // cannot happen: a build starts only without a state
			_ = b.st.release()
		} else {
			l.state = b.st
		}
	}
	return l.state, nil
}

// setup returns the executor's state, building it (or waiting for the
// build Prepare started) at the first call. On success the caller is
// counted in l.inflight and must call l.inflight.Done.
func (l *Landlock) setup() (*landlockState, error) {
	for {
		if _, err := l.built(); err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil, errClosed()
		}
		if st := l.state; st != nil {
			l.inflight.Add(1)
			l.mu.Unlock()
			return st, nil
		}
		if l.building == nil {
			set, err := l.settings()
			if err != nil {
				l.mu.Unlock()
				return nil, err
			}
			l.startBuild(set, nil) // built() waits for it, l.mu free: Close can stop it
		}
		l.mu.Unlock()
	}
}

// landlockSettings is what settings checked, for buildState, and as
// root what Prepare made early: the network namespace and the proxy in it.
type landlockSettings struct {
	net, work, helper, netns string
	netnsF                   *os.File
	egress                   *egressState
}

// network makes the executor's network namespace (root) and, under
// NetProxy, starts the egress proxy in it.
func (set *landlockSettings) network(srv EgressServer) error {
	f, err := newNetns()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	set.netnsF = f
	if set.net == NetProxy {
		if set.egress, err = startEgress(f, srv); err != nil {
			set.release()
			return fmt.Errorf("%w: %w", ErrStart, err)
		}
	}
	return nil
}

// release undoes network, for settings no state took.
func (set *landlockSettings) release() {
	_ = set.egress.stop()
	if set.netnsF != nil {
		_ = set.netnsF.Close()
	}
	set.egress, set.netnsF = nil, nil
}

// settings checks what the caller and this machine decide, cheaply: the
// network policy, the work dir, the helper, the Landlock ABI.
func (l *Landlock) settings() (landlockSettings, error) {
	net := NetNone
	switch l.Net {
	case "", NetNone:
	case NetProxy:
		if l.Egress == nil {
			return landlockSettings{}, fmt.Errorf("%w: network policy %q without an egress proxy", ErrInvalid, l.Net)
		}
		net = NetProxy
	default:
		return landlockSettings{}, fmt.Errorf("%w: network policy %q (use \"none\" or \"proxy\")", ErrInvalid, l.Net)
	}
	if !filepath.IsAbs(l.WorkDir) {
		return landlockSettings{}, fmt.Errorf("%w: work dir %q is not absolute", ErrInvalid, l.WorkDir)
	}
	work, err := filepath.EvalSymlinks(l.WorkDir)
	if err != nil {
		return landlockSettings{}, fmt.Errorf("%w: work dir: %w", ErrStart, err)
	}
	if fi, err := os.Stat(work); err != nil || !fi.IsDir() {
		return landlockSettings{}, fmt.Errorf("%w: work dir %s is not a directory", ErrStart, work)
	}
	if home, err := os.UserHomeDir(); err == nil {
		if err := checkWorkDir(work, home); err != nil {
			return landlockSettings{}, err
		}
		if real, err := filepath.EvalSymlinks(home); err == nil {
			if err := checkWorkDir(work, real); err != nil {
				return landlockSettings{}, err
			}
		}
	} else if err := checkWorkDir(work, ""); err != nil {
		return landlockSettings{}, err
	}
	helper := l.Helper
	if helper == "" {
		if helper, err = os.Executable(); err != nil {
			return landlockSettings{}, fmt.Errorf("%w: finding the sandbox helper: %w", ErrStart, err)
		}
	}
	if helper, err = filepath.Abs(helper); err != nil {
		return landlockSettings{}, fmt.Errorf("%w: the sandbox helper: %w", ErrStart, err)
	}
	netns, err := netnsID("/proc/self/ns/net")
	if err != nil {
		return landlockSettings{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	if abi := landlockABI(); abi < MinLandlockABI {
		return landlockSettings{}, fmt.Errorf("%w: Landlock ABI %d, need at least %d", ErrStart, abi, MinLandlockABI)
	}
	return landlockSettings{net: net, work: work, helper: helper, netns: netns}, nil
}

// buildState builds what every command shares, for settings set; it
// stops, and builds nothing, when ctx ends.
func (l *Landlock) buildState(ctx context.Context, set landlockSettings) (*landlockState, error) {
	// The walk of /etc for the grants and the walk of the work dir for
	// the masks go on together: neither needs the other.
	base := make(chan []grant, 1)
	go func() { base <- baseGrants() }()
	st := &landlockState{helper: set.helper, workDir: set.work, netns: set.netns, net: set.net, cgroups: findPidsCgroup(),
		netnsF: set.netnsF, egress: set.egress, base: base} // from here on, st.release releases them
	if st.cgroups != "" {
		sweepCgroups(st.cgroups)
		if l.memory() > 0 {
			if st.memcg = findMemoryCgroup(); st.memcg != "" && st.memcg != st.cgroups {
				sweepCgroups(st.memcg)
			}
		}
	}
	sweepHeld() // what killed reins left
	home, _ := os.UserHomeDir()
	st.masks = findMasks(ctx, st.workDir, home)
	if ctx.Err() != nil { // the walk stopped short: these masks are not all
		_ = st.release()
		return nil, errClosed()
	}
	if n := st.masks.count(); n > maxMasks {
		_ = st.release()
		return nil, fmt.Errorf("%w: the work dir has %d credential files and protected paths to mask, more than %d; use a smaller --workdir", ErrStart, n, maxMasks)
	}
	st.stage = l.Stage && !l.PerCommand
	if err := st.build(os.Geteuid() == 0); err != nil {
		_ = st.release()
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	if st.net == NetProxy && st.egress == nil {
		var err error
		if st.egress, err = startEgress(st.netnsF, l.Egress); err != nil {
			_ = st.release()
			return nil, fmt.Errorf("%w: %w", ErrStart, err)
		}
	}
	return st, nil
}

// errClosed is what a closed executor, or a build Close stopped, says.
func errClosed() error { return fmt.Errorf("%w: the landlock executor is closed", ErrStart) }
