package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/protect"
)

// git judges a git command line: global options (-c with command-valued
// keys), then the subcommand.
func (a *analyzer) git(argv []arg, sc *scope, in *input, cmd string) {
	var trees []arg // directories git works in, other than the current one
	i := 1
	for i < len(argv) {
		x := argv[i]
		if !x.lit {
			break
		}
		v := x.val
		switch {
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--super-prefix" ||
			v == "--config-env":
			if v == "--config-env" && i+1 < len(argv) {
				a.gitConfigEnv(argv[i+1], cmd)
			}
			if (v == "-C" || v == "--work-tree" || v == "--git-dir") && i+1 < len(argv) {
				trees = append(trees, argv[i+1])
			}
			i += 2
			continue
		case strings.HasPrefix(v, "--work-tree=") || strings.HasPrefix(v, "--git-dir="):
			_, d, _ := strings.Cut(v, "=")
			trees = append(trees, litArg(d))
			i++
			continue
		case v == "-c":
			if i+1 < len(argv) {
				a.gitConfig(argv[i+1], sc, cmd)
			}
			i += 2
			continue
		case strings.HasPrefix(v, "--config-env="):
			a.gitConfigEnv(litArg(strings.TrimPrefix(v, "--config-env=")), cmd)
			i++
			continue
		case strings.HasPrefix(v, "-"):
			i++
			continue
		}
		break
	}
	if i >= len(argv) {
		return
	}
	sub := argv[i]
	if !sub.lit {
		a.ask(ruleDynamicCommand, "the git subcommand is only known at run time", cmd)
		return
	}
	rest := argv[i+1:]
	if len(trees) > 0 && gitWrites(sub.val, rest) {
		for _, t := range trees {
			// git's own writes into its repository are not protected-path
			// writes; config and hooks are judged by what sets them.
			a.writePathAs(t, sc, cmd, "git "+sub.val+" changes files in", false)
		}
	}
	for j, x := range rest {
		if v, ok := strings.CutPrefix(x.val, "--output="); ok && x.lit {
			a.writePath(litArg(v), sc, cmd, "git "+sub.val+" writes to")
		}
		if (x.val == "--output" || x.val == "--output-directory" || x.val == "-o" && sub.val == "format-patch") && j+1 < len(rest) {
			a.writePath(rest[j+1], sc, cmd, "git "+sub.val+" writes to")
		}
		if v, ok := strings.CutPrefix(x.val, "--output-directory="); ok && x.lit {
			a.writePath(litArg(v), sc, cmd, "git "+sub.val+" writes to")
		}
	}
	for j, x := range rest {
		switch {
		case strings.HasPrefix(x.val, "ext::"):
			y := x
			y.val = strings.ReplaceAll(strings.TrimPrefix(x.val, "ext::"), "%", "")
			a.codeValue("git ext::", y, sc, cmd)
		case x.val == "--upload-pack" || x.val == "--receive-pack" || x.val == "--exec" && sub.val != "rebase":
			if j+1 < len(rest) {
				a.codeValue("git "+x.val, rest[j+1], sc, cmd)
			}
		case strings.HasPrefix(x.val, "--upload-pack=") || strings.HasPrefix(x.val, "--receive-pack=") ||
			strings.HasPrefix(x.val, "--exec=") && sub.val != "rebase":
			name, v, _ := strings.Cut(x.val, "=")
			y := x
			y.val = v
			a.codeValue("git "+name, y, sc, cmd)
		}
	}
	switch sub.val {
	case "push":
		a.gitPush(rest, cmd)
		if p := a.parseOpts(rest, 0, "o", []string{"repo", "push-option", "receive-pack", "exec"}, false); len(p.ops) > 0 {
			if r := p.ops[0]; !r.lit || remoteSpec(r.val) || strings.HasPrefix(r.val, "/") || strings.HasPrefix(r.val, ".") {
				a.ask(ruleGitPushUrl, "git push sends the repository to an address that is not a configured remote", cmd)
			}
		}
	case "remote":
		if len(rest) > 0 && isOneOf(rest[0].val, "add", "set-url") {
			a.ask(ruleGitRemoteChange, "git remote "+rest[0].val+" changes where git sends the repository", cmd)
		}
	case "reset":
		if hasOpt(rest, "--hard") {
			a.ask(ruleGitResetHard, "git reset --hard discards uncommitted changes", cmd)
		}
	case "apply", "am":
		p := a.parseOpts(rest, 0, "pC", []string{"exclude", "include", "directory", "whitespace", "build-fake-ancestor"}, false)
		if len(p.ops) == 0 {
			a.patchFiles("git "+sub.val, arg{}, false, in, sc, cmd)
		}
		for _, o := range p.ops {
			a.patchFiles("git "+sub.val, o, true, in, sc, cmd)
		}
	case "clean":
		a.gitClean(rest, cmd)
	case "rm":
		a.gitRm(rest, sc, cmd)
	case "checkout", "restore":
		a.gitDiscard(sub.val, rest, cmd)
		// the paths it writes come from another revision or the index,
		// whose content the agent may have chosen
		p := a.parseOpts(rest, 0, "bBs", []string{"source", "conflict", "pathspec-from-file"}, false)
		for _, o := range p.ops {
			if !o.lit {
				continue
			}
			ps, _ := a.resolve(o.val, sc)
			for _, q := range ps {
				if a.protectWrite(q, o.glob, cmd, "git "+sub.val+" writes") {
					break
				}
			}
		}
	case "stash":
		if len(rest) > 0 && (rest[0].val == "drop" || rest[0].val == "clear") {
			a.ask(ruleGitDiscard, "git stash "+rest[0].val+" deletes stashed changes", cmd)
		}
	case "branch":
		for _, x := range rest {
			if x.val == "-D" || x.lit && strings.HasPrefix(x.val, "-") && !strings.HasPrefix(x.val, "--") &&
				strings.Contains(x.val, "d") && strings.Contains(x.val, "f") {
				a.ask(ruleGitBranchDelete, "git branch -D deletes a branch that may not be merged", cmd)
				break
			}
		}
	case "reflog", "gc", "prune":
		for _, x := range rest {
			if x.val == "expire" || x.val == "delete" || strings.HasPrefix(x.val, "--prune=now") || strings.HasPrefix(x.val, "--expire=now") {
				a.ask(ruleGitDiscard, "git "+sub.val+" deletes history that could recover lost work", cmd)
				break
			}
		}
	case "clone":
		a.gitClone(rest, sc, cmd)
	case "init":
		p := a.parseOpts(rest, 0, "b", []string{"template", "separate-git-dir", "object-format", "initial-branch", "shared"}, false)
		if len(p.ops) > 0 {
			a.writePath(p.ops[0], sc, cmd, "git init creates")
		}
		if t, ok := p.value("--template"); ok && t.val != "" {
			a.ask(ruleGitHooks, "git init --template installs hooks from another directory", cmd)
		}
	case "worktree":
		if len(rest) > 0 && rest[0].val == "add" {
			if p := a.parseOpts(rest, 1, "bB", []string{"reason"}, false); len(p.ops) > 0 {
				a.writePath(p.ops[0], sc, cmd, "git worktree add creates")
			}
		}
	case "config":
		a.gitConfigCmd(rest, sc, cmd)
	case "update-index":
		for j, x := range rest {
			v := x.val
			if v == "--cacheinfo" && j+1 < len(rest) {
				v = "--cacheinfo=" + rest[j+1].val
			}
			if c, ok := strings.CutPrefix(v, "--cacheinfo="); ok {
				f := strings.Split(c, ",")
				if p := f[len(f)-1]; len(f) == 3 {
					a.gitIndexPath(p, sc, cmd)
				} else if j+3 < len(rest) && !strings.Contains(c, ",") {
					a.gitIndexPath(rest[j+3].val, sc, cmd) // --cacheinfo mode sha path
				}
			}
		}
		if hasOpt(rest, "--index-info") {
			if text, _, known := a.inputText(in); known {
				for line := range strings.Lines(text) {
					if _, p, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t"); ok {
						a.gitIndexPath(p, sc, cmd)
					}
				}
			} else {
				a.ask(ruleProtectedPath, "git update-index --index-info stages paths only known at run time, "+
					"which a later checkout writes", cmd)
			}
		}
	case "submodule":
		if len(rest) > 1 && rest[0].val == "add" {
			if p := a.parseOpts(rest, 1, "b", []string{"branch", "name", "reference", "depth"}, false); len(p.ops) > 1 {
				a.writePath(p.ops[1], sc, cmd, "git submodule add checks out into")
			}
		}
		for j, x := range rest {
			if x.val == "foreach" {
				words := rest[j+1:]
				for len(words) > 0 && words[0].lit && strings.HasPrefix(words[0].val, "-") {
					words = words[1:]
				}
				a.joined("git submodule foreach", words, sc, cmd)
				break
			}
		}
	case "rebase":
		p := a.parseOpts(rest, 0, "xsXS", []string{"exec", "strategy", "strategy-option", "onto", "gpg-sign", "whitespace",
			"empty", "rebase-merges"}, false)
		for _, c := range p.values("-x", "--exec") {
			a.codeValue("git rebase --exec", c, sc, cmd)
		}
	case "bisect":
		if len(rest) > 1 && rest[0].val == "run" {
			a.run("git bisect run", rest[1:], sc, nil)
		}
	case "difftool", "mergetool":
		p := a.parseOpts(rest, 0, "xt", []string{"extcmd", "tool"}, false)
		if c, ok := p.value("-x", "--extcmd"); ok {
			a.codeValue("git "+sub.val+" --extcmd", c, sc, cmd)
		}
	case "filter-branch", "filter-repo":
		a.ask(ruleGitRewrite, "git "+sub.val+" rewrites history", cmd)
		for j, x := range rest {
			if strings.HasSuffix(x.val, "-filter") && strings.HasPrefix(x.val, "--") && j+1 < len(rest) {
				a.codeValue("git filter-branch "+x.val, rest[j+1], sc, cmd)
			}
		}
	case "grep":
		for _, x := range rest {
			if v, ok := strings.CutPrefix(x.val, "--open-files-in-pager="); ok {
				a.codeValue("git grep -O", litArg(v), sc, cmd)
			} else if strings.HasPrefix(x.val, "-O") && len(x.val) > 2 {
				a.codeValue("git grep -O", litArg(x.val[2:]), sc, cmd)
			}
		}
	case "archive":
		p := a.parseOpts(rest, 0, "o", []string{"output", "remote", "exec", "format", "prefix", "add-file"}, false)
		if o, ok := p.value("-o", "--output"); ok {
			a.writePath(o, sc, cmd, "git archive writes")
		}
	case "send-email", "imap-send", "daemon", "instaweb", "http-backend", "p4", "svn", "cvsserver":
		a.deny(ruleNetTool, "git "+sub.val+" sends data off the machine or serves the repository", cmd)
	case "credential", "credential-store", "credential-cache", "credential-osxkeychain", "credential-libsecret":
		for _, x := range rest {
			if x.val == "fill" || x.val == "get" {
				a.deny(ruleCredentialRead, "git "+sub.val+" prints stored credentials", cmd)
				break
			}
		}
	}
}

func (a *analyzer) gitPush(rest []arg, cmd string) {
	force, del := false, false
	for j := 0; j < len(rest); j++ {
		x := rest[j]
		if !x.lit {
			continue
		}
		v := x.val
		switch {
		case v == "--force" || strings.HasPrefix(v, "--force-with-lease") || v == "--force-if-includes" || v == "--mirror":
			force = true
		case v == "--delete" || v == "--prune":
			del = true
		case v == "--push-option" || v == "--repo" || v == "--receive-pack" || v == "--exec":
			j++
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && len(v) > 1:
		group:
			for _, c := range v[1:] {
				switch c {
				case 'f':
					force = true
				case 'd':
					del = true
				case 'o':
					if strings.HasSuffix(v, "o") {
						j++
					}
					break group
				}
			}
		case strings.HasPrefix(v, "+") && len(v) > 1:
			force = true
		case strings.HasPrefix(v, ":") && len(v) > 1:
			del = true
		}
	}
	if force {
		a.ask(ruleGitForcePush, "git push --force can overwrite history on the remote", cmd)
	}
	if del {
		a.ask(ruleGitPushDelete, "git push deletes refs on the remote", cmd)
	}
}

func (a *analyzer) gitClean(rest []arg, cmd string) {
	dry := false
	for j := 0; j < len(rest); j++ {
		x := rest[j]
		v := x.val
		switch {
		case !x.lit:
		case v == "--":
			j = len(rest)
		case v == "--dry-run":
			dry = true
		case v == "--exclude":
			j++
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && len(v) > 1:
			for k, c := range v[1:] {
				if c == 'n' {
					dry = true
				}
				if c == 'e' {
					if k == len(v)-2 {
						j++
					}
					break
				}
			}
		}
	}
	// Without -f git clean still deletes when clean.requireForce was turned
	// off (git config clean.requireForce false), so only a dry run passes.
	if !dry {
		a.ask(ruleGitClean, "git clean deletes untracked files", cmd)
	}
}

// gitIndexPath asks when git stages content at a protected path without the
// file being written: a later checkout or reset writes it.
func (a *analyzer) gitIndexPath(p string, sc *scope, cmd string) {
	ps, _ := a.resolve(p, sc)
	for _, q := range ps {
		if a.protectWrite(q, false, cmd, "git update-index stages content for") {
			return
		}
	}
}

// gitRm judges git rm: with -r, or a pathspec git expands itself ('*.log'
// matches in every directory), it deletes a tree's tracked files, and with
// -f their uncommitted changes. --cached only untracks: nothing is deleted.
func (a *analyzer) gitRm(rest []arg, sc *scope, cmd string) {
	p := a.parseOpts(rest, 0, "", []string{"pathspec-from-file"}, false)
	if p.has("--cached", "-n", "--dry-run") {
		return
	}
	if f, ok := p.value("--pathspec-from-file"); ok {
		a.remove(arg{val: dynMark, raw: f.raw, many: true}, true, sc, cmd, "git rm --pathspec-from-file")
	}
	recursive := p.has("-r")
	for _, o := range p.ops {
		if !o.lit || recursive || strings.ContainsAny(o.val, "*?[") || strings.HasPrefix(o.val, ":") {
			v := o
			if o.lit && !recursive {
				v.many = true // a pathspec glob: git matches it in every directory
			}
			a.remove(v, true, sc, cmd, "git rm")
			continue
		}
		a.remove(o, false, sc, cmd, "git rm")
	}
}

func (a *analyzer) gitDiscard(sub string, rest []arg, cmd string) {
	staged, worktree, dash := false, false, false
	for _, x := range rest {
		v := x.val
		switch {
		case dash || !x.lit || !strings.HasPrefix(v, "-"):
			if v == "." || v == ":/" || v == "*" || v == "./" || v == ":(top)" {
				if sub == "checkout" || !staged || worktree {
					a.ask(ruleGitDiscard, "git "+sub+" "+v+" discards uncommitted changes", cmd)
					return
				}
			}
		case v == "--":
			dash = true
		case v == "--staged" || v == "-S":
			staged = true
		case v == "--worktree" || v == "-W":
			worktree = true
		case sub == "checkout" && (v == "-f" || v == "--force"):
			a.ask(ruleGitDiscard, "git checkout --force discards uncommitted changes", cmd)
			return
		}
	}
}

func (a *analyzer) gitClone(rest []arg, sc *scope, cmd string) {
	p := a.parseOpts(rest, 0, "bojuc", []string{"branch", "origin", "jobs", "upload-pack", "config", "reference",
		"reference-if-able", "separate-git-dir", "depth", "shallow-since", "shallow-exclude", "filter", "server-option",
		"template", "bundle-uri", "revision", "recurse-submodules"}, false)
	for _, c := range p.values("-c", "--config") {
		a.gitConfig(c, sc, cmd)
	}
	if u, ok := p.value("-u"); ok {
		a.codeValue("git clone -u", u, sc, cmd)
	}
	if t, ok := p.value("--template"); ok && t.val != "" {
		a.ask(ruleGitHooks, "git clone --template installs hooks from another directory", cmd)
	}
	if d, ok := p.value("--separate-git-dir"); ok {
		a.writePath(d, sc, cmd, "git clone writes to")
	}
	switch len(p.ops) {
	case 0:
	case 1:
		if p.ops[0].lit {
			name := strings.TrimSuffix(path.Base(strings.TrimRight(strings.ReplaceAll(p.ops[0].val, ":", "/"), "/")), ".git")
			if name != "" && name != "." && name != "/" {
				a.writePath(litArg(name), sc, cmd, "git clone writes into")
			}
		}
	default:
		a.writePath(p.ops[1], sc, cmd, "git clone writes into")
	}
}

// gitCmdKey reports git configuration keys whose values git runs as
// commands.
func gitCmdKey(k string) bool {
	k = strings.ToLower(k)
	if strings.HasPrefix(k, "alias.") {
		return true
	}
	for _, s := range []string{"sshcommand", ".pager", ".editor", "askpass", ".fsmonitor", "gitproxy", ".program",
		".cmd", ".command", ".textconv", ".driver", ".clean", ".smudge", ".process", ".helper", ".uploadpack",
		".receivepack", "packobjectshook", ".external", ".proxycommand", "sequence.editor", ".tool"} {
		if strings.HasSuffix(k, s) {
			return s != ".tool"
		}
	}
	return false
}

// gitWrites reports git subcommands that change files in the work tree or
// the repository.
func gitWrites(sub string, rest []arg) bool {
	switch sub {
	case "status", "log", "diff", "show", "ls-files", "ls-tree", "rev-parse", "rev-list", "grep", "blame", "describe",
		"shortlog", "cat-file", "fetch", "remote", "help", "version", "whatchanged", "reflog", "count-objects", "fsck",
		"for-each-ref", "show-ref", "name-rev", "merge-base", "var", "check-ignore", "annotate":
		return false
	case "branch", "tag":
		return len(rest) > 0 && !hasOpt(rest, "-l") && !hasOpt(rest, "--list")
	case "config":
		return !hasOpt(rest, "--get") && !hasOpt(rest, "--list") && !hasOpt(rest, "-l")
	}
	return true
}

// gitConfigParams judges GIT_CONFIG_PARAMETERS: quoted 'key=value' words.
func (a *analyzer) gitConfigParams(val arg, sc *scope, cmd string) {
	if !val.lit {
		a.deny(ruleDynamicCommand, "GIT_CONFIG_PARAMETERS is only known at run time", cmd)
		return
	}
	f, err := a.parse("x " + val.val)
	if err != nil || len(f.Stmts) != 1 {
		a.deny(ruleDynamicCommand, "GIT_CONFIG_PARAMETERS cannot be read", cmd)
		return
	}
	ce, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		a.deny(ruleDynamicCommand, "GIT_CONFIG_PARAMETERS cannot be read", cmd)
		return
	}
	inner := *sc
	inner.src = "x " + val.val
	for _, w := range a.args(ce.Args[1:], &inner) {
		a.gitConfig(w, sc, cmd)
	}
}

// gitConfig judges one key=value of git -c (or git config, clone -c,
// GIT_CONFIG_PARAMETERS): a key whose value git runs as a command, or that
// loads hooks or config from elsewhere, asks, however the value looks.
func (a *analyzer) gitConfig(kv arg, sc *scope, cmd string) {
	key, val, _ := strings.Cut(kv.val, "=")
	low := strings.ToLower(key)
	if !kv.lit && !strings.Contains(key, dynMark) && kv.val != "" && !strings.Contains(kv.val, "=") {
		val = dynMark // the value part is what is unknown
	}
	switch {
	case strings.Contains(key, dynMark):
		a.ask(ruleGitConfigCode, "git sets a config key only known at run time, which may be one git runs as a command", cmd)
	case inertGitCommand(low, val, kv.lit):
	case protect.ExecutableGitKey(key, val) || !kv.lit && strings.HasPrefix(low, "alias."):
		a.ask(ruleGitConfigCode, "git sets "+key+", whose value git runs as a command or which loads code from elsewhere", cmd)
	}
	if low == "core.hookspath" || low == "include.path" || strings.HasPrefix(low, "includeif.") || low == "core.worktree" {
		a.ask(ruleGitHooks, "git loads hooks or settings from another place ("+key+")", cmd)
		return
	}
	if strings.Contains(kv.val, "ext::") {
		_, c, _ := strings.Cut(kv.val, "ext::")
		a.codeValue("git ext::", litArg(strings.ReplaceAll(c, "%", "")), sc, cmd)
		return
	}
	if !gitCmdKey(key) {
		return
	}
	if strings.HasPrefix(strings.ToLower(key), "alias.") && !strings.HasPrefix(strings.TrimSpace(val), "!") {
		return
	}
	v := kv
	v.val = val
	a.codeValue("git -c "+key, v, sc, cmd)
}

// inertGitCommand reports a pager or editor set to a program that runs no
// code of anyone's choosing (git -c core.editor=true commit --amend).
func inertGitCommand(key, val string, lit bool) bool {
	if !lit || key != "core.pager" && key != "core.editor" && key != "sequence.editor" && !strings.HasPrefix(key, "pager.") {
		return false
	}
	switch strings.TrimSpace(val) {
	case "true", "false", ":", "cat", "less", "less -R", "less -FRX", "more":
		return true
	}
	return false
}

// gitConfigEnv judges --config-env=key=ENVVAR: the value comes from the
// environment, so a command-valued key runs an unknown command.
func (a *analyzer) gitConfigEnv(kv arg, cmd string) {
	key, _, _ := strings.Cut(kv.val, "=")
	if protect.ExecutableGitKey(key, "") {
		a.ask(ruleGitConfigCode, "git --config-env sets "+key+", whose value git runs as a command, from the environment", cmd)
	}
	if gitCmdKey(key) || !kv.lit {
		a.deny(ruleDynamicCommand, "git --config-env sets "+key+" to a command only known at run time", cmd)
	}
}

func (a *analyzer) gitConfigCmd(rest []arg, sc *scope, cmd string) {
	p := a.parseOpts(rest, 0, "f", []string{"file", "blob", "type", "default", "comment", "value"}, false)
	ops := p.ops
	if len(ops) > 0 {
		switch ops[0].val {
		case "get", "list", "get-regexp", "get-urlmatch", "get-color", "get-colorbool", "edit", "rename-section", "remove-section", "unset":
			return
		case "set":
			ops = ops[1:]
		}
	}
	if p.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--unset", "--unset-all",
		"--remove-section", "--rename-section", "--get-color", "--get-colorbool", "-e", "--edit") {
		return
	}
	if len(ops) < 2 {
		return
	}
	if f, ok := p.value("-f", "--file"); ok {
		a.writePath(f, sc, cmd, "git config writes")
	}
	if p.has("--global", "--system") {
		a.deny(ruleWriteOutside, "git config --global or --system writes git settings outside the work dir", cmd)
	}
	key, val := ops[0], ops[1]
	if !key.lit {
		a.ask(ruleDynamicCommand, "git config sets a key only known at run time", cmd)
		return
	}
	kv := val
	kv.val = key.val + "=" + val.val
	a.gitConfig(kv, sc, cmd)
}
