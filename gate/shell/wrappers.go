package shell

import (
	"strings"
)

// unwrapPriv looks inside commands that run another command with other
// privileges (they are refused already; what they run is judged too).
func (a *analyzer) unwrapPriv(name string, argv []arg, sc *scope, in *input) {
	cmd := joinRaw(argv)
	switch name {
	case "sudo", "sudoedit":
		p := a.parseOpts(argv, 1, "ugCDhprtTUR", []string{"user", "group", "close-from", "chdir", "host", "prompt", "role",
			"type", "command-timeout", "other-user", "chroot"}, true)
		i := p.rest
		for i < len(argv) && isAssignment(argv[i].val) {
			k, v, _ := strings.Cut(argv[i].val, "=")
			val := litArg(v)
			val.lit = argv[i].lit
			a.envVar(k, val, sc, cmd)
			i++
		}
		if p.has("-e", "--edit") || name == "sudoedit" {
			for _, f := range argv[i:] {
				a.writePath(f, sc, cmd, name+" edits")
			}
			return
		}
		a.run(name, argv[i:], sc, in)
	case "doas":
		a.run(name, argv[a.parseOpts(argv, 1, "uC", nil, true).rest:], sc, in)
	case "pkexec":
		a.run(name, argv[a.parseOpts(argv, 1, "", []string{"user"}, true).rest:], sc, in)
	case "run0":
		a.run(name, argv[a.parseOpts(argv, 1, "ugD", []string{"user", "group", "property", "unit", "description", "slice",
			"setenv", "chdir", "machine", "nice", "background", "pty"}, true).rest:], sc, in)
	case "su", "runuser":
		p := a.parseOpts(argv, 1, "cgGswu", []string{"command", "session-command", "group", "supp-group", "shell",
			"whitelist-environment", "user"}, name == "runuser" && hasOpt(argv, "-u"))
		if c, ok := p.value("-c", "--command", "--session-command"); ok {
			a.codeValue(name+" -c", c, sc, cmd)
			return
		}
		if name == "runuser" && p.has("-u", "--user") {
			a.run(name, argv[p.rest:], sc, in)
		}
	case "chroot":
		p := a.parseOpts(argv, 1, "", []string{"userspec", "groups"}, true)
		if p.rest+1 < len(argv) {
			a.run(name, argv[p.rest+1:], sc, in)
		}
	case "nsenter":
		a.run(name, argv[a.parseOpts(argv, 1, "tSGw", []string{"target", "setuid", "setgid", "wd", "env"}, true).rest:], sc, in)
	case "unshare":
		a.run(name, argv[a.parseOpts(argv, 1, "SGRw", []string{"setuid", "setgid", "map-user", "map-group", "propagation",
			"wd", "root", "setgroups", "map-users", "map-groups"}, true).rest:], sc, in)
	case "setpriv":
		a.run(name, argv[a.parseOpts(argv, 1, "", []string{"reuid", "regid", "ruid", "rgid", "euid", "egid", "groups",
			"inh-caps", "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label", "apparmor-profile",
			"landlock-access", "landlock-rule", "seccomp-filter"}, true).rest:], sc, in)
	case "systemd-run":
		a.run(name, argv[a.parseOpts(argv, 1, "pEMH", []string{"property", "unit", "description", "slice", "setenv", "uid",
			"gid", "nice", "working-directory", "on-calendar", "on-active", "on-boot", "on-startup", "on-unit-active",
			"on-unit-inactive", "timer-property", "path-property", "socket-property", "service-type", "machine", "host"}, true).rest:], sc, in)
	case "capsh":
		for i, x := range argv {
			if x.lit && x.val == "--" {
				a.shell("bash", append([]arg{litArg("bash")}, argv[i+1:]...), sc, in, cmd)
				return
			}
		}
	case "sg":
		if len(argv) > 2 {
			rest := argv[2:]
			if rest[0].lit && rest[0].val == "-c" && len(rest) > 1 {
				a.codeValue("sg -c", rest[1], sc, cmd)
				return
			}
			a.joined("sg", rest, sc, cmd)
		}
	}
}

func hasOpt(argv []arg, name string) bool {
	for _, x := range argv {
		if x.lit && x.val == name {
			return true
		}
	}
	return false
}

// isAssignment reports NAME=value.
func isAssignment(v string) bool {
	eq := strings.IndexByte(v, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := v[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// envAssignment reports an env NAME=VALUE argument: env takes any word
// with "=" before the command as one (BASH_FUNC_f%%=... too).
func envAssignment(v string) bool {
	eq := strings.IndexByte(v, '=')
	return eq > 0 && !strings.Contains(v[:eq], "/")
}

// joined judges words that a program joins with spaces and runs with sh -c.
func (a *analyzer) joined(via string, words []arg, sc *scope, cmd string) {
	if len(words) == 0 {
		return
	}
	if !words[0].lit {
		a.deny(ruleDynamicCommand, via+" runs a command only known at run time", cmd)
		return
	}
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.lit {
			b.WriteString(w.val)
		} else {
			b.WriteString(`"$ARG"`)
		}
	}
	a.nested(b.String(), sc, via, false, false, cmd)
}

// wrapper looks inside commands that run their arguments as a command.
func (a *analyzer) wrapper(name string, argv []arg, sc *scope, in *input, cmd string) {
	rest := len(argv)
	switch name {
	case "exec":
		rest = a.parseOpts(argv, 1, "a", nil, true).rest
	case "command":
		p := a.parseOpts(argv, 1, "", nil, true)
		if p.has("-v", "-V") {
			return
		}
		rest = p.rest
	case "builtin", "nohup", "coproc", "catchsegv", "dbus-launch", "dbus-run-session", "ssh-agent", "nocache", "chronic",
		"caffeinate", "unbuffer", "tsp", "rlwrap", "valgrind", "firejail", "proot", "sem":
		rest = firstOperand(argv, 1)
		if name == "tsp" || name == "sem" {
			a.ask(rulePersistence, name+" queues a command to run later", cmd)
		}
	case "setsid":
		rest = a.parseOpts(argv, 1, "", nil, true).rest
	case "env":
		a.env(argv, sc, in, cmd)
		return
	case "nice":
		rest = a.parseOpts(argv, 1, "n", []string{"adjustment"}, true).rest
	case "ionice":
		p := a.parseOpts(argv, 1, "cnpPu", []string{"class", "classdata", "pid", "pgid", "uid"}, true)
		if p.has("-p", "-P", "-u", "--pid", "--pgid", "--uid") {
			return
		}
		rest = p.rest
	case "timeout", "gtimeout":
		rest = a.parseOpts(argv, 1, "sk", []string{"signal", "kill-after"}, true).rest + 1
	case "stdbuf":
		rest = a.parseOpts(argv, 1, "ioe", []string{"input", "output", "error"}, true).rest
	case "chrt":
		p := a.parseOpts(argv, 1, "TPD", []string{"sched-runtime", "sched-period", "sched-deadline"}, true)
		if p.has("-p", "--pid") {
			return
		}
		rest = p.rest + 1
	case "taskset":
		p := a.parseOpts(argv, 1, "", nil, true)
		if p.has("-p", "--pid") {
			return
		}
		rest = p.rest + 1
	case "time":
		p := a.parseOpts(argv, 1, "fo", []string{"format", "output"}, true)
		if o, ok := p.value("-o", "--output"); ok {
			a.writePath(o, sc, cmd, "time writes to")
		}
		rest = p.rest
	case "flock":
		p := a.parseOpts(argv, 1, "wEc", []string{"timeout", "conflict-exit-code", "command"}, true)
		if c, ok := p.value("-c", "--command"); ok {
			a.codeValue("flock -c", c, sc, cmd)
			return
		}
		if p.rest >= len(argv) {
			return
		}
		if !isFD(argv[p.rest]) {
			a.writePath(argv[p.rest], sc, cmd, "flock creates")
		}
		r := argv[p.rest+1:]
		if len(r) > 1 && r[0].lit && (r[0].val == "-c" || r[0].val == "--command") {
			a.codeValue("flock -c", r[1], sc, cmd)
			return
		}
		rest = p.rest + 1
	case "strace", "ltrace":
		p := a.parseOpts(argv, 1, "oepsuEabIOPSXUAnDFLlxw", []string{"output", "trace", "expr", "attach", "string-limit", "user",
			"env", "signal", "status", "trace-path", "summary-sort-by"}, true)
		if o, ok := p.value("-o", "--output"); ok {
			a.writePath(o, sc, cmd, name+" writes to")
		}
		rest = p.rest
	case "systemd-inhibit":
		rest = a.parseOpts(argv, 1, "", []string{"what", "who", "why", "mode"}, true).rest
	case "cpulimit":
		p := a.parseOpts(argv, 1, "lpe", []string{"limit", "pid", "exe"}, true)
		if p.has("-p", "-e", "--pid", "--exe") {
			return
		}
		rest = p.rest
	case "bwrap":
		rest = bwrapRest(argv)
	case "fakeroot":
		rest = a.parseOpts(argv, 1, "lisb", []string{"lib", "faked"}, true).rest
	case "faketime":
		rest = a.parseOpts(argv, 1, "f", nil, true).rest + 1
	case "numactl":
		rest = a.parseOpts(argv, 1, "CNmpiPlw", nil, true).rest
	case "prlimit":
		p := a.parseOpts(argv, 1, "p", []string{"pid"}, true)
		if p.has("-p", "--pid") {
			return
		}
		rest = p.rest
	}
	if rest < len(argv) {
		a.run(name, argv[rest:], sc, in)
	}
}

func bwrapRest(argv []arg) int {
	two := []string{"--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--ro-bind", "--ro-bind-try", "--setenv",
		"--symlink", "--file", "--bind-data", "--ro-bind-data", "--chmod"}
	one := []string{"--chdir", "--unsetenv", "--tmpfs", "--proc", "--dev", "--dir", "--mqueue", "--uid", "--gid",
		"--hostname", "--lock-file", "--sync-fd", "--info-fd", "--json-status-fd", "--block-fd", "--userns-block-fd",
		"--seccomp", "--add-seccomp-fd", "--exec-label", "--file-label", "--cap-add", "--cap-drop", "--remount-ro",
		"--userns", "--userns2", "--pidns", "--argv0", "--size", "--perms", "--args"}
	i := 1
	for i < len(argv) && argv[i].lit && strings.HasPrefix(argv[i].val, "--") {
		v := argv[i].val
		i++
		if v == "--" {
			break
		}
		if contains(two, v) {
			i += 2
		} else if contains(one, v) {
			i++
		}
	}
	return i
}

// env handles env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [COMMAND [ARG]...].
func (a *analyzer) env(argv []arg, sc *scope, in *input, cmd string) {
	inner := *sc
	i := 1
loop:
	for ; i < len(argv); i++ {
		x := argv[i]
		v := x.val
		if !x.lit {
			if !envAssignment(v) {
				break
			}
			k, _, _ := strings.Cut(v, "=")
			a.envVar(k, arg{val: dynMark, raw: x.raw}, sc, cmd)
			continue
		}
		switch {
		case v == "--":
			i++
			break loop
		case v == "-" || v == "-i" || v == "-0" || v == "-v" || v == "--ignore-environment" || v == "--null" || v == "--debug":
		case v == "-u" || v == "--unset" || v == "-P":
			i++
		case v == "-C" || v == "--chdir" || strings.HasPrefix(v, "--chdir="):
			dir := litArg(strings.TrimPrefix(v, "--chdir="))
			if !strings.HasPrefix(v, "--chdir=") {
				if i+1 >= len(argv) {
					return
				}
				i++
				dir = argv[i]
			}
			a.cd([]arg{litArg("cd"), dir}, &inner)
		case v == "-S" || v == "--split-string" || strings.HasPrefix(v, "--split-string=") || strings.HasPrefix(v, "-S"):
			var s arg
			switch {
			case strings.HasPrefix(v, "--split-string="):
				s = litArg(strings.TrimPrefix(v, "--split-string="))
			case len(v) > 2 && v[1] == 'S':
				s = litArg(v[2:])
			case i+1 < len(argv):
				i++
				s = argv[i]
			}
			words := append([]arg{s}, argv[i+1:]...)
			a.joined("env -S", words, &inner, cmd)
			return
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-"):
			g := v[1:]
			if strings.ContainsAny(g, "SC") {
				a.deny(ruleDynamicCommand, "env is given options this check cannot follow", cmd)
				return
			}
			if k := strings.IndexAny(g, "uP"); k >= 0 && k == len(g)-1 {
				i++
			}
		case envAssignment(v):
			k, val, _ := strings.Cut(v, "=")
			a.envVar(k, litArg(val), sc, cmd)
		default:
			break loop
		}
	}
	if i < len(argv) {
		a.run("env", argv[i:], &inner, in)
	}
}

// shell judges sh, bash and the like: a -c string is parsed and judged; a
// script file is allowed; code on standard input is parsed when it can be
// known and refused when it cannot.
func (a *analyzer) shell(name string, argv []arg, sc *scope, in *input, cmd string) {
	cmdMode, stdinMode := false, false
	i := 1
	for ; i < len(argv); i++ {
		x := argv[i]
		if !x.lit {
			break
		}
		v := x.val
		if v == "--" || v == "-" {
			stdinMode = stdinMode || v == "-" && !cmdMode
			i++
			break
		}
		if strings.HasPrefix(v, "--") {
			if v == "--rcfile" || v == "--init-file" {
				i++
			}
			if v == "--command" {
				cmdMode = true
			}
			continue
		}
		if len(v) < 2 || v[0] != '-' && v[0] != '+' {
			break
		}
		takes := 0
		for _, c := range v[1:] {
			switch c {
			case 'c':
				cmdMode = true
			case 's':
				stdinMode = true
			case 'o', 'O':
				takes++
			}
		}
		i += takes
	}
	if cmdMode {
		if i >= len(argv) {
			return
		}
		a.codeValue(name+" -c", argv[i], sc, cmd)
		return
	}
	if i < len(argv) && !stdinMode {
		f := argv[i]
		switch {
		case !f.lit:
			a.deny(ruleDynamicCommand, name+" runs a script only known at run time ("+f.raw+")", cmd)
		case f.val == "/dev/stdin" || f.val == "/dev/fd/0" || f.val == "/proc/self/fd/0":
			a.stdinCode(name, in, sc, true, cmd)
		default:
			if text, found, known := a.scriptAt(f, sc); found {
				a.runScript(name+" "+f.raw, text, known, sc, cmd, false)
			}
		}
		return
	}
	a.stdinCode(name, in, sc, true, cmd)
}

// stdinCode judges code a shell or interpreter reads on standard input.
func (a *analyzer) stdinCode(name string, in *input, sc *scope, isShell bool, cmd string) {
	if in == nil {
		return
	}
	if in.kind == inFile {
		if text, found, known := a.scriptAt(in.file, &in.sc); found {
			if isShell || !known {
				a.runScript(name+" < "+in.file.raw, text, known, sc, cmd, false)
			} else {
				a.code(name, text, sc, cmd, false)
			}
		}
		return
	}
	text, lit, known := a.inputText(in)
	if isShell {
		switch {
		case !known:
			a.deny(ruleDynamicCommand, name+" runs shell code read from a pipe, which cannot be checked", cmd)
		case !lit:
			a.deny(ruleDynamicCommand, name+" runs shell code from its input that is built at run time", cmd)
		default:
			a.nested(text, sc, name+" <<", false, false, cmd)
		}
		return
	}
	if !known {
		a.ask(ruleInterpreterStdin, name+" runs code read from a pipe", cmd)
		return
	}
	a.code(name, text, sc, cmd, true)
}

func (a *analyzer) eval(argv []arg, sc *scope, cmd string) {
	var b strings.Builder
	for i, x := range argv[1:] {
		if !x.lit {
			a.deny(ruleDynamicCommand, "eval runs a string built at run time", cmd)
			return
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.val)
	}
	if b.Len() > 0 {
		a.nested(b.String(), sc, "eval", true, false, cmd)
	}
}

func (a *analyzer) source(argv []arg, sc *scope, in *input, cmd string) {
	if len(argv) < 2 {
		return
	}
	f := argv[1]
	switch {
	case !f.lit:
		a.deny(ruleDynamicCommand, "source runs a file only known at run time ("+f.raw+")", cmd)
	case f.val == "/dev/stdin" || f.val == "-" || f.val == "/dev/fd/0" || f.val == "/proc/self/fd/0":
		a.stdinCode("source", in, sc, true, cmd)
	default:
		if text, found, known := a.scriptAt(f, sc); found {
			a.runScript("source "+f.raw, text, known, sc, cmd, true)
			return
		}
		// sourcing may change directory: what follows runs in an unknown one
		sc.cwd = mergeDirs(sc.cwd, dirs{unknown: true})
	}
}
