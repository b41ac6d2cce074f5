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

func (a *analyzer) xargs(argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "adEILnPs", []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars",
		"process-slot-var"}, true)
	repl := ""
	if r, ok := p.value("-I"); ok {
		repl = r.val
	}
	for _, o := range p.opts {
		switch {
		case o.name == "-i":
			repl = "{}"
		case o.name == "--replace":
			repl = "{}"
			if o.has {
				repl = o.val.val
			}
		}
	}
	for _, x := range argv[1:p.rest] {
		if x.lit && strings.HasPrefix(x.val, "-i") && len(x.val) > 2 && !strings.HasPrefix(x.val, "--") {
			repl = x.val[2:]
		}
	}
	if f, ok := p.value("-a", "--arg-file"); ok {
		a.readPath(f, sc, cmd)
	}
	inner := append([]arg(nil), argv[p.rest:]...)
	if len(inner) == 0 {
		return
	}
	if repl != "" {
		for i, x := range inner {
			if strings.Contains(x.val, repl) {
				inner[i] = arg{val: strings.ReplaceAll(x.val, repl, dynMark), raw: x.raw, many: true}
			}
		}
	} else {
		inner = append(inner, arg{val: dynMark, raw: "<input>", many: true})
	}
	a.run("xargs", inner, sc, nil)
}

func (a *analyzer) find(argv []arg, sc *scope, cmd string) {
	i := 1
	for i < len(argv) && argv[i].lit {
		v := argv[i].val
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			i++
		} else if v == "-D" {
			i += 2
		} else {
			break
		}
	}
	var roots []arg
	for ; i < len(argv); i++ {
		x := argv[i]
		if x.lit && (strings.HasPrefix(x.val, "-") || x.val == "(" || x.val == "!" || x.val == ")" || x.val == ",") {
			break
		}
		roots = append(roots, x)
	}
	if len(roots) == 0 {
		roots = []arg{litArg(".")}
	}
	if len(roots) > maxDirs {
		roots = roots[:maxDirs]
	}
	for i < len(argv) {
		v := argv[i].val
		if !argv[i].lit {
			i++
			continue
		}
		switch v {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(argv) && !(argv[j].lit && (argv[j].val == ";" || argv[j].val == "+")) {
				j++
			}
			if i+1 < j && strings.Contains(argv[i+1].val, "{}") {
				a.deny(ruleDynamicCommand, "find "+v+" runs the files it finds as programs", cmd)
			}
			for _, r := range roots {
				inner := make([]arg, 0, j-i-1)
				for _, x := range argv[i+1 : j] {
					if strings.Contains(x.val, "{}") {
						// {} is every file found below the root, the root itself included.
						x = arg{val: strings.ReplaceAll(x.val, "{}", r.val), raw: x.raw, lit: x.lit && r.lit, glob: x.glob || r.glob, many: true}
					}
					inner = append(inner, x)
				}
				a.run("find "+v, inner, sc, nil)
			}
			i = j + 1
		case "-delete":
			for _, r := range roots {
				a.remove(r, true, sc, cmd, "find -delete")
			}
			i++
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(argv) {
				a.writePath(argv[i+1], sc, cmd, "find "+v+" writes to")
			}
			i += 2
		default:
			i++
		}
	}
}

func (a *analyzer) parallel(argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "jSadInNLCEeKsxXmMt", []string{"jobs", "sshlogin", "sshloginfile", "slf", "arg-file",
		"delimiter", "colsep", "results", "res", "joblog", "tmpdir", "workdir", "wd", "env", "timeout", "delay",
		"retries", "halt", "memfree", "load", "basefile", "bf", "return", "transferfile", "tf", "max-args",
		"max-replace-args", "max-lines", "replace", "eof", "tagstring", "shebang-wrap", "block", "recstart", "recend",
		"header", "termseq", "nice", "max-procs", "sqlmaster", "sqlworker", "sqlandworker"}, true)
	if p.has("-S", "--sshlogin", "--sshloginfile", "--slf") {
		a.deny(ruleNetTool, "parallel runs commands on remote hosts", cmd)
	}
	rest := argv[p.rest:]
	sep := len(rest)
	for i, x := range rest {
		if x.lit && (x.val == ":::" || x.val == "::::" || x.val == ":::+" || x.val == "::::+") {
			sep = i
			break
		}
	}
	if len(rest) == 0 {
		a.deny(ruleDynamicCommand, "parallel runs commands read from its input", cmd)
		return
	}
	if sep == 0 {
		for _, x := range rest[1:] {
			if x.lit && strings.HasPrefix(x.val, ":::") {
				break
			}
			a.codeValue("parallel", x, sc, cmd)
		}
		return
	}
	words := make([]arg, sep)
	for i, x := range rest[:sep] {
		if x.lit {
			x.val = replaceParallel(x.val)
		}
		words[i] = x
	}
	a.joined("parallel", words, sc, cmd)
}

// replaceParallel replaces GNU parallel's {} placeholders by a variable.
func replaceParallel(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '{' {
			j := i + 1
			for j < len(s) && j-i < 8 && strings.IndexByte("./#%0123456789", s[j]) >= 0 {
				j++
			}
			if j < len(s) && s[j] == '}' {
				b.WriteString(`"$ARG"`)
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (a *analyzer) watch(argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "nq", []string{"interval", "equexit"}, true)
	inner := argv[p.rest:]
	if p.has("-x", "--exec") {
		a.run("watch", inner, sc, nil)
		return
	}
	a.joined("watch", inner, sc, cmd)
}

// fd judges fd's -x/--exec and -X/--exec-batch: the rest of the line (up
// to a lone ";") runs for what fd finds below its search paths, which its
// placeholders ({}, {/}, {//}, {.}, {/.}) or, without one, an added last
// argument stand for: a delete there deletes a tree.
func (a *analyzer) fd(argv []arg, sc *scope, cmd string) {
	for i := 1; i < len(argv); i++ {
		v := argv[i].val
		if !argv[i].lit || v != "-x" && v != "--exec" && v != "-X" && v != "--exec-batch" {
			continue
		}
		j := i + 1
		for j < len(argv) && !(argv[j].lit && argv[j].val == ";") {
			j++
		}
		root := fdRoot(argv[1:i])
		inner := make([]arg, 0, j-i)
		placeholder := false
		for _, x := range argv[i+1 : j] {
			if strings.Contains(x.val, "{") && strings.Contains(x.val, "}") {
				placeholder = true
				x = arg{val: root.val, raw: x.raw, lit: x.lit && root.lit, many: true}
			}
			inner = append(inner, x)
		}
		if !placeholder {
			inner = append(inner, arg{val: root.val, raw: "<found>", lit: root.lit, many: true})
		}
		if len(inner) > 1 || placeholder {
			a.run("fd "+v, inner, sc, nil)
		}
		i = j
	}
}

// fdRoot returns fd's search path: its second operand, else ".".
func fdRoot(args []arg) arg {
	n := 0
	for k := 0; k < len(args); k++ {
		x := args[k]
		if x.lit && strings.HasPrefix(x.val, "-") {
			switch x.val {
			case "-t", "--type", "-e", "--extension", "-E", "--exclude", "-d", "--max-depth", "--min-depth",
				"-S", "--size", "--changed-within", "--changed-before", "-o", "--owner", "-j", "--threads",
				"--search-path", "--base-directory", "-c", "--color", "--ignore-file":
				if x.val == "--search-path" && k+1 < len(args) {
					return args[k+1]
				}
				k++
			}
			continue
		}
		n++
		if n == 2 {
			return x
		}
	}
	return litArg(".")
}
