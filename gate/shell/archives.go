package shell

import (
	"path"
	"strings"
)

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
			if a.netDeny(ruleNetTool, "tar reads or writes an archive on a remote host", cmd) {
				return
			}
			break
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
