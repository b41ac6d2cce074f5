package shell

import (
	"path"
	"strings"
)

// writeCmd judges commands whose operands are written, created or changed.
func (a *analyzer) writeCmd(name string, argv []arg, sc *scope, cmd string) {
	w := func(t arg) { a.writePath(t, sc, cmd, name+" writes to") }
	switch name {
	case "cp", "gcp", "mv", "gmv":
		p := a.parseOpts(argv, 1, "tS", []string{"target-directory", "suffix"}, false)
		if t, ok := p.value("-t", "--target-directory"); ok {
			w(t)
			a.intoDir(t, p.ops, sc, cmd, name+" writes to")
		} else if len(p.ops) >= 2 {
			w(p.ops[len(p.ops)-1])
			a.intoDir(p.ops[len(p.ops)-1], p.ops[:len(p.ops)-1], sc, cmd, name+" writes to")
		}
		if name == "mv" || name == "gmv" {
			for i, o := range p.ops {
				if i < len(p.ops)-1 || p.has("-t", "--target-directory") {
					a.writePath(o, sc, cmd, "mv moves away")
				}
			}
		}
	case "install", "ginstall":
		p := a.parseOpts(argv, 1, "tSmogZ", []string{"target-directory", "suffix", "mode", "owner", "group", "strip-program", "context"}, false)
		if m, ok := p.value("-m", "--mode"); ok && setuidMode(m.val) {
			a.deny(rulePrivEsc, "install sets the setuid or setgid bit", cmd)
		}
		if o, ok := p.value("-o", "--owner"); ok && rootOwner(o.val) {
			a.deny(rulePrivEsc, "install gives files to root", cmd)
		}
		switch t, ok := p.value("-t", "--target-directory"); {
		case p.has("-d", "--directory"):
			for _, o := range p.ops {
				w(o)
			}
		case ok:
			w(t)
			a.intoDir(t, p.ops, sc, cmd, name+" writes to")
		case len(p.ops) >= 2:
			w(p.ops[len(p.ops)-1])
			a.intoDir(p.ops[len(p.ops)-1], p.ops[:len(p.ops)-1], sc, cmd, name+" writes to")
		}
	case "ln", "link":
		a.ln(argv, sc, cmd)
	case "tee", "sponge":
		for _, o := range a.parseOpts(argv, 1, "", []string{"output-error"}, false).ops {
			w(o)
		}
	case "touch", "mkdir", "mkfifo", "mknod", "fallocate", "truncate":
		p := a.parseOpts(argv, 1, "rdtmZsloS", []string{"reference", "date", "time", "mode", "context", "size", "length", "offset"}, false)
		ops := p.ops
		if name == "mknod" && len(ops) > 1 {
			ops = ops[:1]
		}
		for _, o := range ops {
			if o.many && name == "truncate" {
				a.remove(o, true, sc, cmd, "truncate")
				continue
			}
			w(o)
		}
	case "chmod":
		a.chmod(argv, sc, cmd)
	case "chown", "chgrp":
		p := a.parseOpts(argv, 1, "", []string{"from", "reference"}, false)
		ops := p.ops
		if !p.has("--reference") && len(ops) > 0 {
			if name == "chown" && rootOwner(ops[0].val) {
				a.deny(rulePrivEsc, "chown gives files to root", cmd)
			}
			ops = ops[1:]
		}
		for _, o := range ops {
			a.writePath(o, sc, cmd, name+" changes")
		}
	case "sort":
		p := a.parseOpts(argv, 1, "otSkT", []string{"output", "key", "field-separator", "buffer-size", "temporary-directory",
			"parallel", "files0-from", "compress-program", "random-source"}, false)
		if o, ok := p.value("-o", "--output"); ok {
			w(o)
		}
		if c, ok := p.value("--compress-program"); ok {
			a.codeValue("sort --compress-program", c, sc, cmd)
		}
	case "split", "csplit":
		p := a.parseOpts(argv, 1, "abClnftk", []string{"suffix-length", "additional-suffix", "bytes", "line-bytes", "lines",
			"number", "separator", "filter", "prefix", "suffix-format", "digits"}, false)
		if f, ok := p.value("--filter"); ok {
			a.codeValue("split --filter", f, sc, cmd)
		}
		if f, ok := p.value("-f", "--prefix"); ok && name == "csplit" {
			w(f)
		}
		if name == "split" && len(p.ops) >= 2 {
			w(p.ops[1])
		}
	case "patch":
		p := a.parseOpts(argv, 1, "oiBdDFpVYzrgM", []string{"output", "input", "prefix", "directory", "ifdef", "fuzz", "strip",
			"version-control", "basename-prefix", "suffix", "reject-file", "get", "quoting-style", "merge"}, false)
		if o, ok := p.value("-o", "--output"); ok {
			w(o)
		}
		if d, ok := p.value("-d", "--directory"); ok {
			w(d)
		}
		if len(p.ops) > 0 {
			w(p.ops[0])
		}
	}
}

// setuidMode reports a chmod mode that sets the setuid or setgid bit.
func setuidMode(m string) bool {
	if m == "" {
		return false
	}
	if m[0] >= '0' && m[0] <= '7' {
		digits := strings.TrimLeft(m, "0")
		return len(digits) == 4 && digits[0] >= '2' && digits[0] <= '7'
	}
	for _, part := range strings.Split(m, ",") {
		if i := strings.IndexAny(part, "+="); i >= 0 && strings.ContainsRune(part[i:], 's') {
			return true
		}
	}
	return false
}

// rootOwner reports an owner[:group] spec naming root.
func rootOwner(s string) bool {
	owner, group, _ := strings.Cut(s, ":")
	if owner == s {
		owner, group, _ = strings.Cut(s, ".")
	}
	return owner == "root" || owner == "0" || owner == "" && (group == "root" || group == "0")
}

func (a *analyzer) chmod(argv []arg, sc *scope, cmd string) {
	var ops []arg
	ref, dash := false, false
	for _, x := range argv[1:] {
		v := x.val
		switch {
		case dash || !x.lit:
			ops = append(ops, x)
		case v == "--":
			dash = true
		case strings.HasPrefix(v, "--reference"):
			ref = true
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && strings.Trim(v[1:], "Rcfv") == "" && len(v) > 1:
		default:
			ops = append(ops, x)
		}
	}
	if !ref && len(ops) > 0 {
		if setuidMode(ops[0].val) {
			a.deny(rulePrivEsc, "chmod sets the setuid or setgid bit", cmd)
		}
		ops = ops[1:]
	}
	for _, o := range ops {
		a.writePath(o, sc, cmd, "chmod changes")
	}
}

func (a *analyzer) ln(argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "tS", []string{"target-directory", "suffix"}, false)
	var dest arg
	var targets []arg
	switch t, ok := p.value("-t", "--target-directory"); {
	case ok:
		dest, targets = t, p.ops
	case len(p.ops) >= 2:
		dest, targets = p.ops[len(p.ops)-1], p.ops[:len(p.ops)-1]
	case len(p.ops) == 1:
		targets = p.ops
	}
	if dest.raw != "" || dest.val != "" {
		a.writePath(dest, sc, cmd, "ln creates a link at")
	} else {
		dest = litArg(".") // one operand: the link is made here, named as its target
	}
	a.intoDir(dest, targets, sc, cmd, "ln creates a link at")
	symbolic := p.has("-s", "--symbolic")
	// A link to a protected file is a way to write it later: whatever
	// writes the link writes the file. A symbolic link's relative target
	// is relative to the link's directory; both readings are judged.
	for _, t := range targets {
		if !t.lit {
			continue
		}
		ps, _ := a.resolve(t.val, sc)
		if symbolic && !strings.HasPrefix(t.val, "/") && dest.lit {
			// dest may be the link or the directory it goes in
			for _, d := range [2]string{dest.val, path.Dir(dest.val)} {
				lps, _ := a.resolve(path.Join(d, t.val), sc)
				ps = append(ps[:len(ps):len(ps)], lps...)
			}
		}
		for _, q := range ps {
			if r, ok := a.protectedRule(q, t.glob); ok {
				a.ask(ruleProtectedPath, "ln links to "+a.show(q)+", a protected path, so a later write to the link changes it: "+r.Why, cmd)
			}
		}
	}
	if !symbolic {
		return
	}
	for _, t := range targets {
		if !t.lit {
			a.ask(ruleSymlinkOutside, "ln -s links to a target only known at run time", cmd)
			continue
		}
		ps, _ := a.resolve(t.val, sc)
		for _, q := range ps {
			if !a.inside(q) && !writableDevice(q) {
				a.ask(ruleSymlinkOutside, "ln -s links to "+a.show(q)+", outside the work dir, so later writes may land there", cmd)
			}
		}
	}
}

// intoDir asks when dest may be a directory and a source's name joined to
// it is a protected path: cp x/.bashrc . writes ./.bashrc, mv hooks/pre-commit
// .git/hooks writes .git/hooks/pre-commit.
// A dest named like a file (backup.txt) is taken to be one.
func (a *analyzer) intoDir(dest arg, srcs []arg, sc *scope, cmd, verb string) {
	if !dest.lit {
		return
	}
	if b := path.Base(dest.val); !strings.HasSuffix(dest.val, "/") && strings.LastIndexByte(b, '.') > 0 {
		return
	}
	for _, s := range srcs {
		if !s.lit || s.val == "" {
			continue
		}
		b := path.Base(s.val)
		if b == "." || b == ".." || b == "/" {
			continue
		}
		ps, _ := a.resolve(path.Join(dest.val, b), sc)
		for _, p := range ps {
			if a.protectWrite(p, s.glob, cmd, verb) {
				break
			}
		}
	}
}

// rm judges rm, unlink and rmdir.
func (a *analyzer) rm(name string, argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "", nil, false)
	recursive := name == "rm" && p.has("-r", "-R", "--recursive")
	for _, o := range p.ops {
		a.remove(o, recursive, sc, cmd, name)
	}
}

// remove judges deleting t, recursively or not. A t that stands for many
// paths (find's {}, xargs's input) is a recursive delete: of everything
// below find's root, or of whatever the input names.
func (a *analyzer) remove(t arg, recursive bool, sc *scope, cmd, what string) {
	verb := what + " deletes"
	if t.many {
		recursive = true
		verb = what + " deletes every file it is given from"
	} else if recursive {
		verb = what + " deletes recursively"
	}
	if !t.lit {
		if t.many || recursive {
			a.ask(ruleRecursiveDelete, what+" deletes, recursively or many at once, paths only known at run time ("+t.raw+")", cmd)
		}
		a.writePath(t, sc, cmd, verb)
		return
	}
	ps, unknown := a.resolve(t.val, sc)
	for _, p := range ps {
		switch {
		case recursive && a.sweeping(p):
			a.deny(ruleDiskDestroy, verb+" "+a.show(p)+", which holds the system, a home or the work dir", cmd)
		case a.judgeWrite(p, cmd, verb):
		case a.protectWrite(p, t.glob, cmd, verb) && !recursive:
		case recursive:
			a.ask(ruleRecursiveDelete, verb+" "+a.show(p), cmd)
		}
	}
	if unknown {
		a.ask(ruleWriteUnknown, verb+" "+t.raw+" after a change to a directory only known at run time", cmd)
	}
}

// sweeping reports a recursive-delete target that would take the system,
// a home directory or the work dir's parents with it: "/", "/*", "~", "..".
func (a *analyzer) sweeping(p string) bool {
	base := p
	if hasGlob(p) {
		comps := strings.Split(p, "/")
		for i, c := range comps {
			if hasGlob(c) {
				base = strings.Join(comps[:i], "/")
				if base == "" {
					base = "/"
				}
				break
			}
		}
	}
	switch {
	case base == "/" || strings.Count(base, "/") == 1:
		return true
	case under(base, unknownHome) && strings.Count(strings.TrimPrefix(base, unknownHome), "/") == 0:
		return true
	case a.home != "" && under(a.home, base):
		return true
	case a.work != "" && under(a.work, base) && base != a.work:
		return true
	}
	return false
}

func (a *analyzer) shred(argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "ns", []string{"iterations", "size", "random-source"}, false)
	for _, o := range p.ops {
		if o.lit {
			ps, _ := a.resolve(o.val, sc)
			for _, q := range ps {
				if a.inside(q) && !isHistory(q) {
					a.ask(ruleSecureDelete, "shred destroys "+a.show(q)+" beyond recovery", cmd)
				}
			}
		}
		a.writePath(o, sc, cmd, "shred overwrites")
	}
}

func (a *analyzer) dd(argv []arg, sc *scope, cmd string) {
	for _, x := range argv[1:] {
		if v, ok := strings.CutPrefix(x.val, "of="); ok {
			t := x
			t.val = v
			a.writePath(t, sc, cmd, "dd writes to")
		}
	}
}
