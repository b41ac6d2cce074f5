package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// direct returns the argv and environment that run script without the
// shell, as `bash -c script` would run it, or nil when script must go
// through the shell. bash runs a line that is one simple command of
// literal words (l.Simple) by exec'ing the program in place of itself;
// direct does what bash does before that exec: it picks the program bash
// would pick (the first executable file of that name on PATH, or the path
// written, relative to dir), and exports PWD, SHLVL and _ as bash would.
// Anything it does not reproduce exactly goes to the shell: a shell other
// than bash, an environment that bash changes or acts on (bashSpecial, a
// PWD that is not dir, a SHLVL that is not a plain number below 999), a
// PATH with a relative entry before the program, a program not found.
// What it picks and the sandbox cannot exec (a file that is neither ELF
// nor #!, which bash runs as a script of its own; a masked file; a dir
// Landlock does not let it execute from) fails at the exec before any of
// it runs, and Exec runs the line through the shell (errExecFailed): so a
// program rein's view sees and the sandbox's does not never changes what
// runs. rein only stats files to pick: it never opens one.
func (l *Landlock) direct(script string, env []string, dir, realDir string) (argv, envv []string) {
	if l.Simple == nil || filepath.Base(shellOr(l.Shell)) != "bash" {
		return nil, nil
	}
	words, ok := l.Simple(script)
	if !ok || len(words) == 0 {
		return nil, nil
	}
	vars, ok := bashImports(env)
	if !ok {
		return nil, nil
	}
	// PWD: bash keeps it when it names the working directory, else sets
	// the physical one; a PWD other than dir is left to bash, which
	// judges it in the sandbox's view.
	switch pwd, set := vars["PWD"]; {
	case !set:
		vars["PWD"] = realDir
	case pwd != dir && pwd != realDir:
		return nil, nil
	}
	// SHLVL: bash adds one at its start and takes it back at the exec.
	if lvl, set := vars["SHLVL"]; !set {
		vars["SHLVL"] = "0"
	} else if lvl, ok = plainLevel(lvl); ok {
		vars["SHLVL"] = lvl
	} else {
		return nil, nil
	}
	name := words[0]
	var path string
	if strings.Contains(name, "/") {
		// Exec'd as written, relative to dir, as bash does: a script's $0
		// is the path it was exec'd by.
		path = name
		at := name
		if !filepath.IsAbs(at) {
			at = dir + "/" + name // not cleaned: the kernel follows a link before its ..
		}
		if !executable(at) {
			return nil, nil
		}
	} else if path = lookPath(name, vars["PATH"]); path == "" {
		return nil, nil
	}
	vars["_"] = path
	envv = make([]string, 0, len(vars))
	for k, v := range vars {
		envv = append(envv, k+"="+v)
	}
	slices.Sort(envv) // the same order every time, as bash's is

	// argv[0] is the word as written; the path execs.
	return append([]string{path}, words...), envv
}

// bashImports returns env as bash imports it (the last of each name wins;
// entries without a name or an = are dropped), or false when env holds a
// variable bash acts on or changes (bashSpecial).
func bashImports(env []string) (map[string]string, bool) {
	vars := make(map[string]string, len(env)+3)
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if bashSpecial(k) {
			return nil, false
		}
		vars[k] = v
	}
	return vars, true
}

// bashSpecial says whether bash gives the variable name a meaning of its
// own (its manual's "Shell Variables", and exported functions): bash may
// act on it at its start, or change, reset or drop it before the exec.
// Those a command's environment holds as bash passes them on (HOME, PATH,
// the locale's, TMPDIR) are not special here; PWD, SHLVL and _ are set
// by direct as bash sets them.
func bashSpecial(name string) bool {
	// Families by prefix (BASH, BASH_*, BASHOPTS, BASH_FUNC_*%%, COMP_*,
	// HIST*, READLINE_*, MAIL*): a name that only looks like one goes to
	// the shell too, which costs its start and nothing else.
	for _, p := range []string{"BASH", "COMP", "HIST", "READLINE_", "MAIL"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "CDPATH", "CHILD_MAX", "COLUMNS", "COPROC", "DIRSTACK", "EMACS", "ENV", "EPOCHREALTIME",
		"EPOCHSECONDS", "EUID", "EXECIGNORE", "FCEDIT", "FIGNORE", "FUNCNAME", "FUNCNEST", "GLOBIGNORE",
		"GROUPS", "histchars", "HOSTFILE", "HOSTNAME", "HOSTTYPE", "IFS", "IGNOREEOF", "INPUTRC",
		"INSIDE_EMACS", "LINENO", "LINES", "MACHTYPE", "MAPFILE", "OLDPWD", "OPTARG", "OPTERR", "OPTIND",
		"OSTYPE", "PIPESTATUS", "POSIXLY_CORRECT", "PPID", "PROMPT_COMMAND", "PROMPT_DIRTRIM",
		"PS0", "PS1", "PS2", "PS3", "PS4", "RANDOM", "REPLY", "SECONDS", "SHELL", "SHELLOPTS", "SRANDOM",
		"TIMEFORMAT", "TMOUT", "UID":
		return true
	}
	return false
}

// plainLevel is an imported SHLVL that bash exports unchanged at its
// exec, normalised as bash prints it: a plain decimal number below 999
// (bash warns about and resets a higher one). Anything else, which bash
// reads by rules of its own, is left to bash.
func plainLevel(v string) (string, bool) {
	if v == "" || len(v) > 3 || strings.Trim(v, "0123456789") != "" {
		return "", false
	}
	if v = strings.TrimLeft(v, "0"); v == "" {
		v = "0"
	}
	return v, v != "999"
}

// lookPath finds name on path as bash does: the first entry holding an
// executable file of that name that is not a directory (whether the
// kernel can exec it is the exec's to say). It returns "" when there is
// none, or when an entry that is not absolute (the current directory,
// for bash) comes before it.
func lookPath(name, path string) string {
	if path == "" {
		return "" // bash's own default path: left to bash
	}
	for dir := range strings.SplitSeq(path, ":") {
		if !filepath.IsAbs(dir) {
			return ""
		}
		p := dir + "/" + name
		if strings.HasSuffix(dir, "/") {
			p = dir + name
		}
		if executable(p) {
			return p
		}
	}
	return ""
}

// executable says whether p exists, is not a directory, and may be
// executed by this process (as bash judges it: access(2) with the
// effective ids). Nothing is opened.
func executable(p string) bool {
	st, err := os.Stat(p)
	if err != nil || st.IsDir() {
		return false
	}
	return unix.Faccessat(unix.AT_FDCWD, p, unix.X_OK, unix.AT_EACCESS) == nil
}
