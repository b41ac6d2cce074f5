package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// direct returns the argv and environment that run script without the
// shell, as `bash -c script` would run it, or nil when script must go
// through the shell. bash runs a line that is one simple command of
// literal words (l.Simple) by exec'ing the program in place of itself;
// direct does what bash does before that exec: it finds the program on
// PATH (or the path written, from dir), and exports PWD, SHLVL and _ as
// bash would. Anything it does not reproduce exactly goes to the shell: a
// shell other than bash, an environment bash would act on (BASH_ENV, ENV,
// SHELLOPTS, BASHOPTS, exported functions, a shell level bash resets), a
// PATH with a relative entry before the program, a program not found or
// not executable, and a file that is not a binary or a #! script (bash
// runs those itself).
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
	name := words[0]
	var path string
	if strings.Contains(name, "/") {
		// Exec'd as written, relative to dir, as bash does: a script's $0
		// is the path it was exec'd by.
		path = name
		if !runnable(filepath.Join(dir, name)) {
			return nil, nil
		}
	} else if path = lookPath(name, vars["PATH"]); path == "" {
		return nil, nil
	}
	// bash's exports at its exec: PWD kept when it names the directory,
	// else the physical one; SHLVL as it came (bash adds one at its start
	// and takes it back at the exec); _ the program's path, as found.
	if pwd, ok := vars["PWD"]; !ok || !filepath.IsAbs(pwd) || !sameFile(pwd, dir) {
		vars["PWD"] = realDir
	}
	lvl, ok := shellLevel(vars["SHLVL"])
	if !ok {
		return nil, nil
	}
	vars["SHLVL"] = lvl
	vars["_"] = path
	envv = make([]string, 0, len(vars))
	for k, v := range vars {
		envv = append(envv, k+"="+v)
	}
	// argv[0] is the word as written; the path execs.
	return append([]string{path}, words...), envv
}

// bashImports returns env as bash imports it (the last of each name wins;
// entries without = are dropped), or false when env holds something bash
// would act on before running a command.
func bashImports(env []string) (map[string]string, bool) {
	vars := make(map[string]string, len(env)+3)
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch {
		case k == "BASH_ENV", k == "ENV", k == "SHELLOPTS", k == "BASHOPTS", strings.HasPrefix(k, "BASH_FUNC_"):
			return nil, false
		}
		vars[k] = v
	}
	return vars, true
}

// shellLevel is the SHLVL bash exports when it execs a program in place of
// itself, given the one it imported: the same level (an integer is read as
// bash reads it; anything else, or a negative one, counts as 0); false
// when bash would warn that the level is too high and reset it.
func shellLevel(v string) (string, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case err != nil || n < 0:
		return "0", true
	case n >= 999:
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}

// lookPath finds name on path as bash does: the first entry holding an
// executable regular file of that name. It returns "" when there is none,
// or when an entry that is not absolute (the current directory, for bash)
// comes before it.
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
		if runnable(p) {
			return p
		}
	}
	return ""
}

// runnable says whether p is a regular file the caller may execute and
// that the kernel execs itself: an ELF binary or a #! script (bash runs
// any other file as a script of its own).
func runnable(p string) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return false
	}
	if unix.Faccessat(unix.AT_FDCWD, p, unix.X_OK, unix.AT_EACCESS) != nil {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [4]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return false
	}
	return string(head[:2]) == "#!" || string(head[:]) == "\x7fELF"
}

// sameFile says whether a and b name the same file.
func sameFile(a, b string) bool {
	var sa, sb syscall.Stat_t
	if syscall.Stat(a, &sa) != nil || syscall.Stat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
