package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// grantKind names what the helper allows on a path (and beneath it).
type grantKind string

const (
	grantRX  grantKind = "rx"  // read and execute: system directories
	grantR   grantKind = "r"   // read: parts of /etc, /proc
	grantLs  grantKind = "ls"  // list directories only: /etc itself
	grantRW  grantKind = "rw"  // everything: the work dir and the temp dir
	grantDev grantKind = "dev" // read and write a device: /dev/null and co.
)

var grantKinds = []grantKind{grantRX, grantR, grantLs, grantRW, grantDev}

// grant is one Landlock rule of the helper.
type grant struct {
	kind grantKind
	path string
}

// helperConfig is what the helper's flags say.
type helperConfig struct {
	grants   []grant
	statusFD int    // -1 (or 0 in a config built by hand): none
	net      string // NetNone or NetProxy
	netns    string // "dev:ino" of the namespace the helper must not be in
	netnsFD  int    // a network namespace to enter first; -1 (or 0 by hand): stay
	// rulesetFD is a Landlock ruleset rein built once for every command
	// (-1, or 0 by hand: build one from grants).
	rulesetFD int
	cgroup    string // a pids cgroup directory to join, or ""
	memcg     string // a memory cgroup directory (v1) to join, or ""
	// masks are credential files (mask-file) and directories (mask-dir)
	// hidden in the helper's own mount namespace: an empty read-only file
	// or an empty read-only tmpfs mounted over each. maskSrc is the empty
	// file bind-mounted over files.
	maskFiles, maskDirs []string
	// ro are protected paths bind-mounted read-only over themselves.
	ro      []string
	maskSrc string
	nproc   int64 // RLIMIT_NPROC, 0: unchanged
	fsize   int64 // RLIMIT_FSIZE, 0: unchanged
	// keepFDs stay open across the exec (the zygote's control socket and
	// ruleset); every other descriptor above stderr is closed.
	keepFDs []int
	// stageFD is a socket to rein on which the helper starts the stager
	// (see stagerMain) before it confines itself, for the work dir
	// stageWork with per-command dirs under stageRoot; -1: none.
	stageFD              int
	stageWork, stageRoot string
	argv                 []string
	// path is the program exec'd when it is not argv[0] (a direct
	// command's argv[0] is its name as written); "": argv[0].
	path string
}

// program is the path the helper execs.
func (cfg helperConfig) program() string {
	if cfg.path != "" {
		return cfg.path
	}
	return cfg.argv[0]
}

// Status bytes the helper writes on its status pipe: statusReady once
// every restriction is in force, just before the exec; statusFailed and a
// message when it gives up (also after statusReady, when the exec fails).
const (
	statusReady  = 'S'
	statusFailed = 'E'
)

// parseHelperArgs reads the helper's flags:
//
//	-rx|-r|-ls|-rw|-dev PATH   a Landlock grant (repeatable; absolute, clean)
//	-net none|proxy            the network policy
//	-netns DEV:INO             the caller's network namespace, which the helper must have left
//	-netns-fd N                a network namespace to enter first (needs CAP_SYS_ADMIN)
//	-ruleset-fd N              a Landlock ruleset built by rein, instead of grants
//	-cgroup DIR                a pids cgroup to join first
//	-memcg DIR                 a memory cgroup (cgroup v1) to join first
//	-mask-file PATH            hide a file: mount the empty -mask-src over it (repeatable)
//	-mask-dir PATH             hide a directory: mount an empty tmpfs over it (repeatable)
//	-mask-src PATH             the empty file for -mask-file
//	-nproc N, -fsize N         RLIMIT_NPROC and RLIMIT_FSIZE
//	-status-fd N               where to report readiness or failure
//	-keep-fd N                 a descriptor the program keeps (repeatable)
//	-path PATH                 the program to exec when ARG0 is not it (relative: to the working directory)
//	-- ARG0 ARG...             what to exec; ARG0 is the absolute program unless -path
func parseHelperArgs(args []string) (helperConfig, error) {
	cfg := helperConfig{statusFD: -1, netnsFD: -1, rulesetFD: -1, stageFD: -1}
	fs := flag.NewFlagSet(HelperArg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, k := range grantKinds {
		fs.Func(string(k), "grant "+string(k)+" on a path", func(p string) error {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				return fmt.Errorf("path %q is not absolute and clean", p)
			}
			cfg.grants = append(cfg.grants, grant{k, p})
			return nil
		})
	}
	fs.StringVar(&cfg.net, "net", "none", "network policy")
	fs.StringVar(&cfg.netns, "netns", "", "the caller's network namespace")
	fs.IntVar(&cfg.netnsFD, "netns-fd", -1, "network namespace to enter")
	fs.IntVar(&cfg.rulesetFD, "ruleset-fd", -1, "Landlock ruleset to enforce")
	fs.StringVar(&cfg.cgroup, "cgroup", "", "pids cgroup to join")
	fs.StringVar(&cfg.memcg, "memcg", "", "memory cgroup to join")
	fs.StringVar(&cfg.maskSrc, "mask-src", "", "empty file for masks")
	for _, m := range []struct {
		name string
		to   *[]string
	}{{"mask-file", &cfg.maskFiles}, {"mask-dir", &cfg.maskDirs}, {"ro", &cfg.ro}} {
		fs.Func(m.name, "hide a path", func(p string) error {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				return fmt.Errorf("-%s %q is not absolute and clean", m.name, p)
			}
			*m.to = append(*m.to, p)
			return nil
		})
	}
	fs.Int64Var(&cfg.nproc, "nproc", 0, "RLIMIT_NPROC")
	fs.Int64Var(&cfg.fsize, "fsize", 0, "RLIMIT_FSIZE")
	fs.IntVar(&cfg.statusFD, "status-fd", -1, "status pipe")
	fs.StringVar(&cfg.path, "path", "", "the program to exec")
	fs.IntVar(&cfg.stageFD, "stage-fd", -1, "socket for the stager")
	fs.StringVar(&cfg.stageWork, "stage-work", "", "work dir the stager mounts over")
	fs.StringVar(&cfg.stageRoot, "stage-root", "", "where the stager's upper dirs are")
	fs.Func("keep-fd", "a descriptor the program keeps", func(v string) error {
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 {
			return fmt.Errorf("-keep-fd %q: not a descriptor above stderr", v)
		}
		cfg.keepFDs = append(cfg.keepFDs, fd)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.argv = fs.Args()
	switch {
	case cfg.net != NetNone && cfg.net != NetProxy:
		return cfg, fmt.Errorf("unknown network policy %q", cfg.net)
	case !validNetns(cfg.netns):
		return cfg, fmt.Errorf("-netns %q is not DEV:INO", cfg.netns)
	case cfg.cgroup != "" && (!filepath.IsAbs(cfg.cgroup) || filepath.Clean(cfg.cgroup) != cfg.cgroup):
		return cfg, fmt.Errorf("cgroup %q is not absolute and clean", cfg.cgroup)
	case len(cfg.maskFiles) > 0 && !filepath.IsAbs(cfg.maskSrc):
		return cfg, errors.New("-mask-file without an absolute -mask-src")
	case cfg.memcg != "" && (!filepath.IsAbs(cfg.memcg) || filepath.Clean(cfg.memcg) != cfg.memcg):
		return cfg, fmt.Errorf("memory cgroup %q is not absolute and clean", cfg.memcg)
	case cfg.nproc < 0 || cfg.fsize < 0:
		return cfg, errors.New("negative limit")
	case !validFDs(append([]int{cfg.statusFD, cfg.netnsFD, cfg.rulesetFD, cfg.stageFD}, cfg.keepFDs...)...):
		return cfg, fmt.Errorf("descriptors %d, %d, %d, %d, %v: each must be -1 or above stderr, and distinct", cfg.statusFD, cfg.netnsFD, cfg.rulesetFD, cfg.stageFD, cfg.keepFDs)
	case cfg.stageFD >= 0 && (!filepath.IsAbs(cfg.stageWork) || !filepath.IsAbs(cfg.stageRoot)):
		return cfg, errors.New("-stage-fd without an absolute -stage-work and -stage-root")
	case cfg.rulesetFD >= 0 && len(cfg.grants) > 0:
		return cfg, errors.New("both a ruleset and grants")
	case len(cfg.argv) == 0:
		return cfg, errors.New("no program to run")
	case cfg.path == "" && !filepath.IsAbs(cfg.argv[0]):
		return cfg, fmt.Errorf("program %q is not an absolute path (or give -path)", cfg.argv[0])
	}
	return cfg, nil
}

// validFDs reports whether each fd is -1 (none) or above stderr, and no
// two are the same descriptor.
func validFDs(fds ...int) bool {
	for i, fd := range fds {
		if fd < -1 || fd >= 0 && fd < 3 {
			return false
		}
		for _, other := range fds[:i] {
			if fd >= 0 && fd == other {
				return false
			}
		}
	}
	return true
}

// validNetns reports whether s looks like "DEV:INO" (two decimal numbers).
func validNetns(s string) bool {
	d, i, ok := strings.Cut(s, ":")
	_, err1 := strconv.ParseUint(d, 10, 64)
	_, err2 := strconv.ParseUint(i, 10, 64)
	return ok && err1 == nil && err2 == nil
}

// helperArgs is the inverse of parseHelperArgs: the argv prefix (without
// the helper's path and HelperArg) for cfg.
func helperArgs(cfg helperConfig) []string {
	a := make([]string, 0, 2*len(cfg.grants)+16+len(cfg.argv))
	for _, g := range cfg.grants {
		a = append(a, "-"+string(g.kind), g.path)
	}
	a = append(a, "-net", cfg.net, "-netns", cfg.netns)
	if cfg.memcg != "" {
		a = append(a, "-memcg", cfg.memcg)
	}
	if cfg.maskSrc != "" {
		a = append(a, "-mask-src", cfg.maskSrc)
	}
	for _, p := range cfg.maskFiles {
		a = append(a, "-mask-file", p)
	}
	for _, p := range cfg.maskDirs {
		a = append(a, "-mask-dir", p)
	}
	for _, p := range cfg.ro {
		a = append(a, "-ro", p)
	}
	if cfg.cgroup != "" {
		a = append(a, "-cgroup", cfg.cgroup)
	}
	if cfg.nproc > 0 {
		a = append(a, "-nproc", strconv.FormatInt(cfg.nproc, 10))
	}
	if cfg.fsize > 0 {
		a = append(a, "-fsize", strconv.FormatInt(cfg.fsize, 10))
	}
	if cfg.statusFD > 0 {
		a = append(a, "-status-fd", strconv.Itoa(cfg.statusFD))
	}
	if cfg.netnsFD > 0 {
		a = append(a, "-netns-fd", strconv.Itoa(cfg.netnsFD))
	}
	if cfg.rulesetFD > 0 {
		a = append(a, "-ruleset-fd", strconv.Itoa(cfg.rulesetFD))
	}
	if cfg.stageFD > 0 {
		a = append(a, "-stage-fd", strconv.Itoa(cfg.stageFD), "-stage-work", cfg.stageWork, "-stage-root", cfg.stageRoot)
	}
	for _, fd := range cfg.keepFDs {
		a = append(a, "-keep-fd", strconv.Itoa(fd))
	}
	if cfg.path != "" {
		a = append(a, "-path", cfg.path)
	}
	a = append(a, "--")
	return append(a, cfg.argv...)
}

// helperStatus turns what the helper wrote on its status pipe into an
// error: nil when it reported every restriction in force and nothing after.
// stderr is the command's captured stderr, quoted when the helper said
// nothing at all.
func helperStatus(status []byte, helper string, res Result) error {
	switch {
	case len(status) == 1 && status[0] == statusReady:
		return nil
	case len(status) > 0 && status[0] == statusFailed:
		return fmt.Errorf("%w: sandbox: %s", ErrStart, status[1:])
	case len(status) > 1 && status[0] == statusReady && status[1] == statusFailed:
		// Every restriction was in force and the exec failed: nothing of
		// the program ran.
		return fmt.Errorf("%w: sandbox: %w", ErrStart, execFailed(status[2:]))
	case res.TimedOut:
		return fmt.Errorf("%w: sandbox helper %s did not start the command before the timeout", ErrStart, helper)
	}
	msg := strings.TrimSpace(res.Stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Errorf("%w: %s did not act as the sandbox helper (does its main call sandbox.HelperMain when sandbox.IsHelper()?): exit %d: %.200s",
		ErrStart, helper, res.ExitCode, msg)
}
