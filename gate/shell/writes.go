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

// sed judges sed: -i edits its files; scripts that run commands (e, s///e)
// ask; scripts that write (w) are writes.
func (a *analyzer) sed(argv []arg, sc *scope, cmd string) {
	inplace, haveScript := false, false
	var scripts, ops []arg
	for i := 1; i < len(argv); i++ {
		x := argv[i]
		v := x.val
		if !x.lit || len(v) < 2 || v[0] != '-' {
			ops = append(ops, x)
			continue
		}
		if v == "--" {
			ops = append(ops, argv[i+1:]...)
			break
		}
		next := func(rest string) arg {
			if rest != "" {
				return litArg(rest)
			}
			if i+1 < len(argv) {
				i++
				return argv[i]
			}
			return litArg("")
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v[2:], "=")
			switch name {
			case "in-place":
				inplace = true
			case "expression", "file", "line-length":
				if !eq {
					val = next("").val
				}
				if name == "expression" {
					scripts = append(scripts, litArg(val))
				}
				haveScript = haveScript || name != "line-length"
			}
			continue
		}
	group:
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case 'i':
				inplace = true
				break group
			case 'e':
				scripts = append(scripts, next(v[j+1:]))
				haveScript = true
				break group
			case 'f':
				a.readPath(next(v[j+1:]), sc, cmd)
				haveScript = true
				break group
			case 'l':
				next(v[j+1:])
				break group
			}
		}
	}
	if !haveScript && len(ops) > 0 {
		scripts, ops = append(scripts, ops[0]), ops[1:]
	}
	for _, s := range scripts {
		if !s.lit {
			continue
		}
		execs, writes, reads := sedScript(s.val)
		if len(execs) > 0 {
			a.ask(ruleInterpreterCode, "the sed script runs shell commands", cmd)
		}
		for _, e := range execs {
			if e != "" {
				a.nested(e, sc, "sed e", false, true, cmd)
			}
		}
		for _, f := range writes {
			a.writePath(litArg(f), sc, cmd, "the sed script writes to")
		}
		for _, f := range reads {
			a.readPath(litArg(f), sc, cmd)
		}
	}
	if inplace {
		for _, o := range ops {
			a.writePath(o, sc, cmd, "sed -i edits")
		}
	}
}

// sedScript finds the commands of a sed script that run programs or name
// files. It reads addresses and s/y commands well enough to skip them.
func sedScript(s string) (execs, writes, reads []string) {
	i, n := 0, len(s)
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = n - i
		}
		v := strings.TrimSpace(s[i : i+j])
		i += j
		return v
	}
	skipDelim := func() bool { // at a delimiter; move past the matching one
		d := s[i]
		i++
		for i < n && s[i] != d {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= n {
			return false
		}
		i++
		return true
	}
	lastDelimited := func(start int) string { // text between the last two delimiters before i
		if start < 0 || i-1 <= start {
			return ""
		}
		return s[start : i-1]
	}
	for i < n {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!' || c == ',':
			i++
		case c >= '0' && c <= '9' || c == '$' || c == '~' || c == '+':
			i++
		case c == '/':
			if !skipDelim() {
				return
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '\\' && i+1 < n:
			i++
			if !skipDelim() {
				return
			}
		case c == '#' || c == ':' || c == 'a' || c == 'i' || c == 'c':
			restOfLine()
		case c == 'b' || c == 't' || c == 'T':
			i++
			for i < n && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case c == 's' || c == 'y':
			i++
			if i >= n || !skipDelim() {
				return
			}
			i--
			repl := i + 1
			if !skipDelim() {
				return
			}
			if c == 'y' {
				continue
			}
			replacement := lastDelimited(repl)
			for i < n && strings.IndexByte("gpiImMe0123456789w", s[i]) >= 0 {
				switch s[i] {
				case 'e':
					execs = append(execs, replacement)
				case 'w':
					i++
					if f := restOfLine(); f != "" {
						writes = append(writes, f)
					}
					continue
				}
				i++
			}
		case c == 'e':
			i++
			execs = append(execs, restOfLine())
		case c == 'w' || c == 'W':
			i++
			if f := restOfLine(); f != "" && f != "/dev/stdout" && f != "/dev/stderr" {
				writes = append(writes, f)
			}
		case c == 'r' || c == 'R':
			i++
			if f := restOfLine(); f != "" {
				reads = append(reads, f)
			}
		default:
			i++
		}
	}
	return execs, writes, reads
}

// tar judges archives created or extracted, and tar's command options.
func (a *analyzer) tar(argv []arg, sc *scope, cmd string) {
	var files, dirs []arg
	mode := byte(0)
	start := 1
	if len(argv) > 1 && argv[1].lit && argv[1].val != "" && argv[1].val[0] != '-' && isLetters(argv[1].val) {
		next := 2
		for _, c := range []byte(argv[1].val) {
			switch c {
			case 'c', 'x', 't', 'r', 'u', 'A', 'd':
				mode = c
			case 'f', 'C', 'T', 'X', 'b', 'K', 'N', 'g', 'L', 'V', 'F', 'H', 'I':
				if next < len(argv) {
					switch c {
					case 'f':
						files = append(files, argv[next])
					case 'C':
						dirs = append(dirs, argv[next])
					case 'I', 'F':
						a.codeValue("tar -"+string(c), argv[next], sc, cmd)
					}
					next++
				}
			}
		}
		start = next
	}
	p := a.parseOpts(argv, start, "fCTXbKNgLVFHI", []string{"file", "directory", "files-from", "exclude-from",
		"blocking-factor", "starting-file", "newer", "after-date", "listed-incremental", "tape-length", "label",
		"info-script", "new-volume-script", "format", "use-compress-program", "to-command", "checkpoint-action",
		"rsh-command", "rmt-command", "exclude", "transform", "xform", "owner", "group", "mode", "mtime", "suffix",
		"strip-components", "index-file", "record-size", "volno-file", "warning", "newer-mtime", "occurrence"}, false)
	for _, o := range p.opts {
		switch o.name {
		case "-c", "--create":
			mode = 'c'
		case "-x", "--extract", "--get":
			mode = 'x'
		case "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate", "--delete":
			mode = 'r'
		case "-f", "--file":
			files = append(files, o.val)
		case "-C", "--directory":
			dirs = append(dirs, o.val)
		case "-I", "--use-compress-program", "--to-command", "-F", "--info-script", "--new-volume-script",
			"--rsh-command", "--rmt-command":
			a.codeValue("tar "+o.name, o.val, sc, cmd)
		case "--checkpoint-action":
			if v, ok := strings.CutPrefix(o.val.val, "exec="); ok {
				x := o.val
				x.val = v
				a.codeValue("tar --checkpoint-action", x, sc, cmd)
			}
		}
	}
	for _, f := range files {
		if f.lit && remoteSpec(f.val) && !p.has("--force-local") {
			a.deny(ruleNetTool, "tar reads or writes an archive on a remote host", cmd)
			return
		}
	}
	if p.has("--remove-files") {
		for _, o := range p.ops {
			a.remove(o, true, sc, cmd, "tar --remove-files")
		}
	}
	switch mode {
	case 'c', 'r':
		for _, f := range files {
			if f.val != "-" {
				a.writePath(f, sc, cmd, "tar writes the archive")
			}
		}
	case 'x':
		if len(dirs) == 0 {
			dirs = []arg{litArg(".")}
		}
		for _, d := range dirs {
			a.writePath(d, sc, cmd, "tar extracts into")
			a.members(d, p.ops, sc, cmd, "tar extracts")
		}
		if p.has("-P", "--absolute-names") {
			a.ask(ruleWriteUnknown, "tar -P extracts to absolute paths stored in the archive", cmd)
		}
	}
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// archive judges zip, unzip, 7z, cpio and the compressors.
func (a *analyzer) archive(name string, argv []arg, sc *scope, cmd string) {
	w := func(t arg, verb string) { a.writePath(t, sc, cmd, name+" "+verb) }
	switch name {
	case "unzip":
		dir, members, seenZip := litArg("."), []arg(nil), false
		for i := 1; i < len(argv); i++ {
			x := argv[i]
			switch {
			case x.val == "-x" || x.val == "-d":
				if x.val == "-d" && i+1 < len(argv) {
					dir = argv[i+1]
					i++
					continue
				}
				i = len(argv)
			case x.lit && strings.HasPrefix(x.val, "-d") && len(x.val) > 2:
				dir = litArg(x.val[2:])
			case x.lit && strings.HasPrefix(x.val, "-"):
			case !seenZip:
				seenZip = true
			default:
				members = append(members, x)
			}
		}
		a.members(dir, members, sc, cmd, "unzip extracts")
		for i, x := range argv {
			switch {
			case x.val == "-d" && i+1 < len(argv):
				w(argv[i+1], "extracts into")
			case x.lit && strings.HasPrefix(x.val, "-d") && len(x.val) > 2:
				w(litArg(x.val[2:]), "extracts into")
			case x.val == "-:":
				a.ask(ruleWriteUnknown, "unzip -: extracts to paths outside the target directory", cmd)
			}
		}
	case "zip":
		for i, x := range argv {
			if (x.val == "-TT" || x.val == "--unzip-command") && i+1 < len(argv) {
				a.codeValue("zip -TT", argv[i+1], sc, cmd)
			}
			if (x.val == "-O" || x.val == "--output-file") && i+1 < len(argv) {
				w(argv[i+1], "writes")
			}
		}
		if i := firstOperand(argv, 1); i < len(argv) && argv[i].val != "-" {
			w(argv[i], "writes")
		}
	case "7z", "7za", "7zr":
		for _, x := range argv[1:] {
			if x.lit && strings.HasPrefix(x.val, "-o") && len(x.val) > 2 {
				w(litArg(x.val[2:]), "extracts into")
			}
		}
		if len(argv) > 2 && argv[1].lit && (argv[1].val == "a" || argv[1].val == "u" || argv[1].val == "d") {
			if i := firstOperand(argv, 2); i < len(argv) {
				w(argv[i], "writes")
			}
		}
	case "unrar":
		p := a.parseOpts(argv, 1, "", nil, false)
		if len(p.ops) >= 3 && strings.HasSuffix(p.ops[len(p.ops)-1].val, "/") {
			w(p.ops[len(p.ops)-1], "extracts into")
		}
	case "cpio":
		p := a.parseOpts(argv, 1, "DEFHIMORs", []string{"directory", "pattern-file", "file", "format", "message", "owner", "rsh-command"}, false)
		if d, ok := p.value("-D", "--directory"); ok {
			w(d, "extracts into")
		}
		if p.has("-i", "--extract") && !p.has("--no-absolute-filenames") {
			a.ask(ruleWriteUnknown, "cpio -i extracts to the paths stored in the archive", cmd)
		}
		if p.has("-p", "--pass-through") && len(p.ops) > 0 {
			w(p.ops[len(p.ops)-1], "copies into")
		}
	case "ar":
		if len(argv) > 2 {
			w(argv[2], "writes")
		}
	default: // gzip and friends replace their inputs
		p := a.parseOpts(argv, 1, "oSbL", []string{"suffix", "output"}, false)
		if o, ok := p.value("-o", "--output"); ok {
			w(o, "writes")
			return
		}
		if p.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") {
			return
		}
		for _, o := range p.ops {
			if o.val != "-" {
				w(o, "replaces")
			}
		}
	}
}

// patchFiles asks when a patch whose text the analyzer can see (a
// here-document, a pipe from echo or printf, a file written earlier in the
// line) writes a protected path. f is the patch file, when one is named
// (has); otherwise the patch is read from stdin. A patch whose text is not
// known is judged by the files it names on the command line only.
func (a *analyzer) patchFiles(what string, f arg, has bool, in *input, sc *scope, cmd string) {
	var text string
	var known bool
	switch {
	case has:
		text, _, known = a.scriptAt(f, sc)
	case in != nil && in.kind == inFile:
		text, _, known = a.scriptAt(in.file, sc)
	default:
		text, _, known = a.inputText(in)
	}
	if !known {
		return
	}
	for _, p := range patchPaths(text) {
		ps, _ := a.resolve(p, sc)
		for _, q := range ps {
			if a.protectWrite(q, false, cmd, what+" writes") {
				break
			}
		}
	}
}

// patchPaths returns the paths a unified or git diff names as written:
// "+++ x", "diff --git a/x b/y", "rename to x", "copy to x", each also
// with its first element stripped (a/, b/).
func patchPaths(text string) []string {
	var out []string
	add := func(p string) {
		p = strings.TrimSpace(p)
		if i := strings.IndexByte(p, '\t'); i >= 0 {
			p = p[:i] // a timestamp follows
		}
		p = strings.Trim(p, "\"")
		if p == "" || p == "/dev/null" {
			return
		}
		out = append(out, p)
		if _, rest, ok := strings.Cut(p, "/"); ok && rest != "" {
			out = append(out, rest)
		}
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
			add(line[4:])
		case strings.HasPrefix(line, "diff --git "):
			for _, f := range strings.Fields(line[len("diff --git "):]) {
				add(f)
			}
		case strings.HasPrefix(line, "rename to "), strings.HasPrefix(line, "copy to "):
			_, p, _ := strings.Cut(line, " to ")
			add(p)
		case strings.HasPrefix(line, "Index: "):
			add(line[len("Index: "):])
		}
	}
	return out
}

// members asks when an archive member named on the command line, extracted
// under dir, is a protected path: tar -xf x.tar .git/hooks/pre-commit.
func (a *analyzer) members(dir arg, names []arg, sc *scope, cmd, verb string) {
	if !dir.lit {
		return
	}
	for _, m := range names {
		if !m.lit || m.val == "" || m.val == "-" {
			continue
		}
		ps, _ := a.resolve(path.Join(dir.val, m.val), sc)
		for _, p := range ps {
			if a.protectWrite(p, m.glob || hasGlob(m.val), cmd, verb) {
				break
			}
		}
	}
}
