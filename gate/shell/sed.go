package shell

import "strings"

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
