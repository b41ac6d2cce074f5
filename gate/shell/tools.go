package shell

import "strings"

// Judges for programs that run commands from their own options or input:
// terminal multiplexers, containers, make, go, editors and debuggers,
// forge and cloud clients.

func (a *analyzer) alias(argv []arg, sc *scope, cmd string) {
	for _, x := range argv[1:] {
		if !x.lit {
			a.deny(ruleDynamicCommand, "alias defines a command only known at run time", cmd)
			return
		}
		if _, v, ok := strings.Cut(x.val, "="); ok && v != "" {
			a.nested(v, sc, "alias", false, false, cmd)
		}
	}
}

func (a *analyzer) trap(argv []arg, sc *scope, cmd string) {
	i := 1
	for i < len(argv) && argv[i].lit && strings.HasPrefix(argv[i].val, "-") && argv[i].val != "-" {
		if argv[i].val == "--" {
			i++
			break
		}
		if argv[i].val == "-p" || argv[i].val == "-l" {
			return
		}
		i++
	}
	if i+1 < len(argv) {
		a.codeValue("trap", argv[i], sc, cmd)
	}
}

func (a *analyzer) script(argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "cEIOBTm", []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing",
		"logging-format", "output-limit"}, false)
	if c, ok := p.value("-c", "--command"); ok {
		a.codeValue("script -c", c, sc, cmd)
	}
	for _, f := range p.values("-I", "-O", "-B", "-T", "--log-in", "--log-out", "--log-io", "--log-timing") {
		a.writePath(f, sc, cmd, "script logs to")
	}
	for _, f := range p.ops {
		a.writePath(f, sc, cmd, "script logs to")
	}
}

// terminal judges tmux and screen commands that start shell commands.
func (a *analyzer) terminal(name string, argv []arg, sc *scope, cmd string) {
	if name == "screen" {
		p := a.parseOpts(argv, 1, "ScehpTtX", nil, true)
		if x, ok := p.value("-X"); ok && x.lit && (x.val == "stuff" || x.val == "exec") {
			a.joined("screen -X", argv[p.rest:], sc, cmd)
			return
		}
		if p.rest < len(argv) {
			a.run("screen", argv[p.rest:], sc, nil)
		}
		return
	}
	for i, x := range argv {
		if !x.lit {
			continue
		}
		switch x.val {
		case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp",
			"respawn-window", "respawnw", "run-shell", "run", "display-popup", "popup", "pipe-pane", "pipep", "if-shell", "if":
			last := argv[len(argv)-1]
			if len(argv)-1 > i && !(last.lit && strings.HasPrefix(last.val, "-")) {
				a.codeValue("tmux "+x.val, last, sc, cmd)
			}
			return
		case "send-keys", "send":
			var words []arg
			for _, k := range argv[i+1:] {
				if k.lit && (strings.HasPrefix(k.val, "-") || isKeyName(k.val)) {
					continue
				}
				words = append(words, k)
			}
			a.joined("tmux send-keys", words, sc, cmd)
			return
		}
	}
}

func isKeyName(s string) bool {
	switch s {
	case "Enter", "C-m", "C-c", "C-d", "C-z", "Escape", "Space", "Tab", "BSpace", "Up", "Down", "Left", "Right", "KPEnter":
		return true
	}
	return false
}

// container refuses container runs that reach the host as root.
func (a *analyzer) container(name string, argv []arg, sc *scope, cmd string) {
	if s, _ := subcmd(argv, 1); s == "push" {
		a.ask(rulePublish, name+" push uploads an image to a registry", cmd)
	}
	for i, x := range argv {
		v := x.val
		switch {
		case v == "--privileged" || v == "--pid=host" || v == "--userns=host" || v == "--ipc=host" ||
			strings.HasPrefix(v, "--cap-add") && (strings.Contains(v, "SYS_ADMIN") || strings.Contains(v, "ALL")) ||
			strings.Contains(v, "docker.sock") || strings.Contains(v, "seccomp=unconfined") || strings.Contains(v, "apparmor=unconfined"):
			a.deny(rulePrivEsc, name+" gives a container root access to the host", cmd)
			return
		case (v == "-v" || v == "--volume" || v == "--mount") && i+1 < len(argv):
			h := argv[i+1].val
			h = strings.TrimPrefix(h, "type=bind,")
			h = strings.TrimPrefix(strings.TrimPrefix(h, "source="), "src=")
			if strings.HasPrefix(h, "/:") || h == "/" || strings.HasPrefix(h, "/,") || strings.HasPrefix(h, "/etc") ||
				strings.HasPrefix(h, "/root") || strings.HasPrefix(h, "/var/run") || strings.HasPrefix(h, "/run") {
				a.deny(rulePrivEsc, name+" mounts a host system directory into a container", cmd)
				return
			}
		}
	}
}

func (a *analyzer) make(argv []arg, sc *scope, in *input, cmd string) {
	p := a.parseOpts(argv, 1, "CfIjlWoE", []string{"directory", "file", "makefile", "include-dir", "jobs", "load-average",
		"what-if", "new-file", "assume-new", "old-file", "assume-old", "eval"}, false)
	for _, e := range p.values("-E", "--eval") {
		if !e.lit {
			a.deny(ruleDynamicCommand, "make --eval runs rules only known at run time", cmd)
			continue
		}
		if r := makeRecipes(e.val); r != "" {
			a.nested(r, sc, "make --eval", false, true, cmd)
		}
	}
	for _, f := range p.values("-f", "--file", "--makefile") {
		if !f.lit || f.val != "-" && f.val != "/dev/stdin" {
			continue
		}
		a.ask(ruleInterpreterStdin, "make reads a makefile from its input", cmd)
		if text, lit, known := a.inputText(in); known {
			if !lit {
				a.deny(ruleDynamicCommand, "make runs a makefile built at run time", cmd)
			}
			if r := makeRecipes(text); r != "" {
				a.nested(r, sc, "make -f -", false, true, cmd)
			}
		}
	}
}

// makeRecipes returns the recipe lines of makefile text, as shell.
func makeRecipes(text string) string {
	var recipes []string
	for _, line := range strings.Split(text, "\n") {
		if r, ok := strings.CutPrefix(line, "\t"); ok {
			recipes = append(recipes, strings.TrimLeft(r, "@-+ "))
		} else if _, r, ok := strings.Cut(line, ";"); ok && strings.Contains(line, ":") {
			recipes = append(recipes, strings.TrimLeft(r, "@-+ "))
		}
	}
	return strings.Join(recipes, "\n")
}

func (a *analyzer) goTool(argv []arg, sc *scope, cmd string) {
	i := firstOperand(argv, 1)
	if i >= len(argv) {
		return
	}
	sub := argv[i].val
	p := a.parseOpts(argv, i+1, "opC", nil, false)
	switch sub {
	case "install", "get":
		a.ask(rulePackageInstall, "go "+sub+" downloads and installs packages", cmd)
	case "run":
		for _, o := range p.ops {
			if strings.Contains(o.val, "@") && !strings.HasPrefix(o.val, "-") {
				a.ask(rulePackageInstall, "go run downloads and runs a remote module", cmd)
				break
			}
		}
	case "env":
		if p.has("-w", "-u") {
			a.ask(rulePackageInstall, "go env -w changes the Go configuration of the user", cmd)
		}
	}
	if o, ok := p.value("-o"); ok && (sub == "build" || sub == "test") {
		a.writePath(o, sc, cmd, "go "+sub+" writes to")
	}
}

// forge judges GitHub-like command line clients: gists and raw API calls
// carry data to a third party.
func (a *analyzer) forge(name string, argv []arg, cmd string) {
	s, at := subcmd(argv, 1, "-R", "--repo")
	next := ""
	if at+1 < len(argv) {
		next = argv[at+1].val
	}
	switch {
	case s == "gist" && isOneOf(next, "create", "new", "edit"), s == "snippet" && isOneOf(next, "create", "new"):
		a.deny(ruleNetTool, name+" "+s+" "+next+" uploads files to a third party", cmd)
	case s == "api":
		a.ask(ruleNetApi, name+" api sends arbitrary requests", cmd)
	case s == "release" && isOneOf(next, "upload", "create"):
		a.ask(rulePublish, name+" release uploads files", cmd)
	case s == "auth" && isOneOf(next, "token", "status"):
		for _, x := range argv {
			if x.val == "--show-token" || x.val == "-t" || next == "token" {
				a.deny(ruleCredentialRead, name+" auth prints a token", cmd)
				return
			}
		}
	}
}

// cloud refuses uploads to cloud storage and other data transfers.
func (a *analyzer) cloud(name string, argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "", []string{"profile", "region", "endpoint-url", "output", "project", "account"}, false)
	remote := func(v string) bool {
		for _, pre := range []string{"s3://", "gs://", "az://", "https://", "http://", "b2://", "oci://"} {
			if strings.HasPrefix(v, pre) {
				return true
			}
		}
		return false
	}
	if len(p.ops) > 0 && (p.ops[0].val == "configure" || p.ops[0].val == "auth" && len(p.ops) > 1 && p.ops[1].val == "print-access-token") {
		if hasOpt(argv, "get") || hasOpt(argv, "export-credentials") || len(p.ops) > 1 && p.ops[1].val == "print-access-token" {
			a.deny(ruleCredentialRead, name+" prints stored credentials", cmd)
		}
		return
	}
	for i, o := range p.ops {
		if isOneOf(o.val, "put-object", "upload", "upload-batch", "put", "sync", "cp", "mv", "rsync", "send", "invoke", "copy") {
			last := p.ops[len(p.ops)-1]
			if o.val != "cp" && o.val != "mv" && o.val != "sync" && o.val != "rsync" && o.val != "copy" || remote(last.val) || !last.lit {
				a.deny(ruleNetTool, name+" "+o.val+" sends data to a remote service", cmd)
				return
			}
			if i+1 < len(p.ops) {
				a.writePath(last, sc, cmd, name+" "+o.val+" writes to")
			}
			return
		}
	}
}

// shellEscapes judges programs whose command options can run shell
// commands: vim -c '!cmd', gdb -ex 'shell cmd', sqlite3 '.shell cmd',
// psql -c '\\! cmd', man -P cmd, less with LESSOPEN.
func (a *analyzer) shellEscapes(name string, argv []arg, sc *scope, cmd string) {
	for i, x := range argv[1:] {
		v := x.val
		var texts []string
		switch {
		case name == "man" && (v == "-P" || v == "--pager" || v == "-H") && i+2 < len(argv):
			texts = append(texts, argv[i+2].val)
		case strings.HasPrefix(v, "+") || v == "-c" || v == "--cmd" || v == "-ex" || v == "--ex" || v == "-eval-command" || v == "-command":
			if strings.HasPrefix(v, "+") {
				texts = append(texts, v[1:])
			} else if i+2 < len(argv) {
				texts = append(texts, argv[i+2].val)
			}
		case name == "sqlite3" || name == "psql" || name == "mysql":
			texts = append(texts, v)
		}
		for _, t := range texts {
			t = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(t), ":"))
			for _, pre := range []string{"!", "shell ", ".shell ", ".system ", "\\! ", "\\!", "system ", "r !", "r!", "w !", "w!", "silent !", "call system("} {
				if j := strings.Index(t, pre); j >= 0 && (j == 0 || pre[0] != '!') {
					a.ask(ruleInterpreterCode, name+" runs shell commands from its options", cmd)
					a.nested(strings.Trim(t[j+len(pre):], "\")"), sc, name, false, true, cmd)
					break
				}
			}
		}
	}
}

// cronCommands returns the commands of crontab lines, one a line.
func cronCommands(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#") || isAssignment(f[0]):
			continue
		case strings.HasPrefix(f[0], "@") && len(f) > 1:
			f = f[1:]
		case len(f) > 5:
			f = f[5:]
		default:
			continue
		}
		b.WriteString(strings.Join(f, " "))
		b.WriteByte('\n')
	}
	return b.String()
}
