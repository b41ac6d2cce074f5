package shell

import "strings"

// Commands that run another command once per item they find or read
// (xargs, find -exec, parallel, watch, fd -x): the command is judged with
// the items as its operands.

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
	// The items after ::: become the command's arguments: a protected
	// path among them may be written (parallel cp x ::: .git/hooks/pre-commit).
	if !words[0].lit {
		return
	}
	prog := cmdName(words[0].val)
	if readOnlyPrograms[prog] || !writes(prog, words) {
		return
	}
	files := false // after ::::, the words are files the items are read from
	for _, x := range rest[sep:] {
		if x.lit && strings.HasPrefix(x.val, ":::") {
			files = strings.HasPrefix(x.val, "::::")
			continue
		}
		if files || (!x.lit && !x.glob) {
			continue
		}
		v1, v2 := operandValues(x.val)
		for _, v := range [2]string{v1, v2} {
			if v != "" {
				a.operandPath(v, x.glob, sc, cmd, "parallel gives "+prog+" the argument")
			}
		}
	}
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
