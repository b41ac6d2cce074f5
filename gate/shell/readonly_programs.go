package shell

import (
	"errors"
	"fmt"
	"strings"
)

// programCheck accepts a program's arguments as read-only or says why not.
type programCheck func(p *prover, args []pword) error

// provenPrograms is the allowlist of the read-only proof: each program
// with the checker of its arguments. A program is here only when every
// option its checker accepts neither writes a file, nor runs another
// program, nor changes the system; options outside that are refused by
// name, and where a program (GNU getopt, git) takes an abbreviation of a
// long option, every abbreviation of a refused option is refused too.
var provenPrograms = provenTable()

// anyArgPrograms are the programs every option of which reads or prints:
// any argument is fine, even one only known at run time (xargs may run
// them). jq reads and prints only: it has no way to write or run.
var anyArgPrograms = map[string]bool{
	"cat": true, "tac": true, "nl": true, "head": true, "tail": true,
	"wc": true, "ls": true, "stat": true, "du": true, "df": true,
	"pwd": true, "echo": true, "printf": true, "true": true, "false": true,
	"basename": true, "dirname": true, "realpath": true, "readlink": true,
	"cut": true, "tr": true, "rev": true, "fold": true, "column": true,
	"expand": true, "unexpand": true, "paste": true, "comm": true, "join": true,
	"cmp": true, "diff": true, "md5sum": true, "sha1sum": true, "sha256sum": true,
	"sha512sum": true, "b2sum": true, "cksum": true, "od": true, "hexdump": true,
	"strings": true, "grep": true, "egrep": true, "fgrep": true, "which": true,
	"whoami": true, "id": true, "uname": true, "nproc": true, "printenv": true,
	"seq": true, "test": true, "[": true, "jq": true, "type": true,
}

func provenTable() map[string]programCheck {
	t := map[string]programCheck{
		// Checked option by option.
		"cd":       cdArgs,
		"command":  commandArgs,
		"sort":     sortArgs,
		"uniq":     uniqArgs,
		"xxd":      xxdArgs,
		"tree":     treeArgs,
		"file":     fileArgs,
		"date":     dateArgs,
		"hostname": hostnameArgs,
		"find":     findArgs,
		"sed":      sedArgs,
		"awk":      awkArgs,
		"gawk":     awkArgs,
		"mawk":     awkArgs,
		"rg":       rgArgs,
		"fd":       fdArgs,
		"xargs":    xargsArgs,
		"git":      gitArgs,
		"go":       goArgs,
	}
	for name := range anyArgPrograms {
		t[name] = anyArgs
	}
	return t
}

func anyArgs(*prover, []pword) error { return nil }

// literal requires every argument to be literal text: a word only known
// at run time may be an option the checker never saw.
func literal(args []pword) error {
	for _, a := range args {
		if !a.lit() {
			return errors.New("an argument is only known at run time")
		}
	}
	return nil
}

// refusedLong reports whether the long option word v ("--name" or
// "--name=value") names, or abbreviates, one of refused.
func refusedLong(v string, refused ...string) bool {
	name, _, _ := strings.Cut(v, "=")
	if len(name) < 3 || !strings.HasPrefix(name, "--") {
		return false
	}
	for _, r := range refused {
		if strings.HasPrefix(r, name) {
			return true
		}
	}
	return false
}

// shortHas reports whether the short-option bundle v ("-abc") holds one
// of the letters in set. Bundled values are read as letters too, which
// may refuse more than needed, never less.
func shortHas(v, set string) bool {
	return len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], set)
}

func cdArgs(p *prover, args []pword) error {
	p.cd = true
	return literal(args)
}

// commandArgs allows command -v and -V, which only say what a name is.
func commandArgs(_ *prover, args []pword) error {
	if err := literal(args); err != nil {
		return err
	}
	if len(args) == 0 || (args[0].val != "-v" && args[0].val != "-V") {
		return errors.New("command runs a program unless given -v or -V")
	}
	return nil
}

// sortArgs refuses -o (writes its output), -T (temporary files) and
// --compress-program (runs a program).
func sortArgs(_ *prover, args []pword) error {
	if err := literal(args); err != nil {
		return err
	}
	for _, a := range args {
		if a.val == "--" {
			break
		}
		if shortHas(a.val, "oT") || refusedLong(a.val, "--output", "--temporary-directory", "--compress-program") {
			return fmt.Errorf("%s writes a file or runs a program", a.val)
		}
	}
	return nil
}

// operands counts the non-option words, skipping the values of the
// options in withValue ("-f" takes the next word).
func operands(args []pword, withValue string) int {
	n := 0
	for i := 0; i < len(args); i++ {
		v := args[i].val
		switch {
		case v == "--":
			return n + len(args) - i - 1
		case len(v) == 2 && v[0] == '-' && strings.IndexByte(withValue, v[1]) >= 0:
			i++
		case len(v) > 1 && v[0] == '-':
		default:
			n++
		}
	}
	return n
}

// uniqArgs: uniq's second operand is the file it writes.
func uniqArgs(_ *prover, args []pword) error {
	if err := literal(args); err != nil {
		return err
	}
	if operands(args, "fsw") > 1 {
		return errors.New("a second operand is the file uniq writes")
	}
	return nil
}

// xxdArgs: xxd's second operand is the file it writes.
func xxdArgs(_ *prover, args []pword) error {
	if err := literal(args); err != nil {
		return err
	}
	if operands(args, "cglsonC") > 1 {
		return errors.New("a second operand is the file xxd writes")
	}
	return nil
}

// treeArgs refuses -o (writes its listing to a file).
func treeArgs(_ *prover, args []pword) error {
	for _, a := range args {
		if !a.lit() && a.kind != wordGlob {
			return errors.New("an argument is only known at run time")
		}
		if a.lit() && (shortHas(a.val, "o") || refusedLong(a.val, "--output")) {
			return errors.New("-o writes the listing to a file")
		}
	}
	return nil
}

// fileArgs refuses -C (compiles a magic file, written beside it).
func fileArgs(_ *prover, args []pword) error {
	for _, a := range args {
		if !a.lit() && a.kind != wordGlob {
			return errors.New("an argument is only known at run time")
		}
		if a.lit() && (shortHas(a.val, "C") || refusedLong(a.val, "--compile")) {
			return errors.New("-C writes a compiled magic file")
		}
	}
	return nil
}

// dateArgs refuses -s (sets the clock).
func dateArgs(_ *prover, args []pword) error {
	if err := literal(args); err != nil {
		return err
	}
	for _, a := range args {
		if shortHas(a.val, "s") || refusedLong(a.val, "--set") {
			return errors.New("-s sets the clock")
		}
	}
	return nil
}

// hostnameArgs allows only the options that print; an operand sets it.
func hostnameArgs(_ *prover, args []pword) error {
	for _, a := range args {
		switch a.val {
		case "-f", "-s", "-i", "-I", "-d", "-A", "--fqdn", "--short", "--domain", "--ip-address", "--all-ip-addresses":
		default:
			return fmt.Errorf("%q may set the host name", a.val)
		}
	}
	return nil
}

// findPredicates lists the find expressions that only test or print, with
// whether they take a value. -exec, -execdir, -ok, -okdir, -delete and the
// -fprint family are not here: they run programs, delete or write.
var findPredicates = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-regextype": true, "-type": true, "-xtype": true,
	"-maxdepth": true, "-mindepth": true, "-newer": true, "-anewer": true, "-cnewer": true,
	"-mtime": true, "-mmin": true, "-atime": true, "-amin": true, "-ctime": true, "-cmin": true, "-used": true,
	"-size": true, "-perm": true, "-user": true, "-group": true, "-uid": true, "-gid": true,
	"-links": true, "-inum": true, "-samefile": true, "-lname": true, "-ilname": true, "-fstype": true,
	"-printf": true,
	"-print":  false, "-print0": false, "-ls": false, "-prune": false, "-quit": false, "-true": false,
	"-false": false, "-empty": false, "-readable": false, "-writable": false, "-executable": false,
	"-nouser": false, "-nogroup": false, "-depth": false, "-d": false, "-xdev": false, "-mount": false,
	"-follow": false, "-daystart": false, "-noleaf": false, "-ignore_readdir_race": false,
	"-noignore_readdir_race": false, "-not": false, "-a": false, "-o": false, "-and": false, "-or": false,
}

func findArgs(_ *prover, args []pword) error {
	if err := literal(args); err != nil {
		return err
	}
	i := 0
	for i < len(args) && (args[i].val == "-H" || args[i].val == "-L" || args[i].val == "-P") {
		i++
	}
	for i < len(args) && !strings.HasPrefix(args[i].val, "-") && args[i].val != "(" && args[i].val != "!" {
		i++ // starting points
	}
	for ; i < len(args); i++ {
		v := args[i].val
		switch v {
		case "(", ")", "!", ",":
			continue
		}
		takes, ok := findPredicates[v]
		if !ok && len(v) == 8 && strings.HasPrefix(v, "-newer") {
			takes, ok = true, true // -newerXY
		}
		if !ok {
			return fmt.Errorf("%s is not a find test known to be read-only", v)
		}
		if takes {
			i++
		}
	}
	return nil
}

// sedArgs allows sed without -i, -f or --in-place, with scripts of the
// commands that only print or edit the pattern space (sedProven).
func sedArgs(_ *prover, args []pword) error {
	if err := literal(args); err != nil {
		return err
	}
	var scripts []string
	i := 0
	for ; i < len(args); i++ {
		v := args[i].val
		if v == "--" {
			i++
			break
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v, "=")
			switch name {
			case "--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered", "--null-data", "--posix", "--debug", "--sandbox":
			case "--expression":
				if !eq {
					i++
					if i >= len(args) {
						return errors.New("--expression without a script")
					}
					val = args[i].val
				}
				scripts = append(scripts, val)
			default:
				return fmt.Errorf("%s is not a sed option known to be read-only", name)
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case 'n', 'E', 'r', 's', 'u', 'z':
				continue
			case 'e':
				s := v[j+1:]
				if s == "" {
					i++
					if i >= len(args) {
						return errors.New("-e without a script")
					}
					s = args[i].val
				}
				scripts = append(scripts, s)
			default:
				return fmt.Errorf("-%c is not a sed option known to be read-only", v[j])
			}
			break
		}
	}
	if len(scripts) == 0 {
		if i >= len(args) {
			return errors.New("no script")
		}
		scripts = append(scripts, args[i].val)
	}
	for _, s := range scripts {
		if err := sedProven(s); err != nil {
			return err
		}
	}
	return nil
}

// sedProven accepts a sed script made only of addresses and the commands
// p d q Q = n N l P D h H g G x z { } and s///, y/// with the flags g p i I
// m M and a count: no w, W, e, r, R, s///w or s///e.
func sedProven(s string) error {
	i, n := 0, len(s)
	skipTo := func(d byte) bool { // past the next unescaped d
		for i < n {
			c := s[i]
			i++
			if c == '\\' {
				i++
				continue
			}
			if c == d {
				return true
			}
		}
		return false
	}
	address := func() error {
		switch {
		case i < n && s[i] == '$':
			i++
		case i < n && s[i] >= '0' && s[i] <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < n && s[i] == '/':
			i++
			if !skipTo('/') {
				return errors.New("an unterminated address")
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return nil
	}
	for i < n {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '}' {
			i++
			continue
		}
		if err := address(); err != nil {
			return err
		}
		if i < n && s[i] == ',' {
			i++
			if i < n && s[i] == '+' {
				i++
			}
			if err := address(); err != nil {
				return err
			}
		}
		for i < n && (s[i] == ' ' || s[i] == '!') {
			i++
		}
		if i >= n {
			return errors.New("an address without a command")
		}
		c = s[i]
		i++
		switch c {
		case 'p', 'd', 'q', 'Q', '=', 'n', 'N', 'l', 'P', 'D', 'h', 'H', 'g', 'G', 'x', 'z', '{':
			for i < n && s[i] >= '0' && s[i] <= '9' { // q5, l70
				i++
			}
		case 's', 'y':
			if i >= n || s[i] == '\\' || s[i] == '\n' {
				return errors.New("a bad delimiter")
			}
			d := s[i]
			i++
			for range 2 { // the pattern, then the replacement (s) or the target set (y)
				if !skipTo(d) {
					return fmt.Errorf("an unterminated %c command", c)
				}
			}
			if c == 's' {
				for i < n && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
					i++
				}
			}
		default:
			return fmt.Errorf("the sed command %q is not known to be read-only", c)
		}
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
			return fmt.Errorf("unexpected %q after a sed command", s[i])
		}
	}
	return nil
}

// awkArgs allows -F and -v and a program that neither runs commands
// (system, pipes, getline), nor writes (> and >> redirections), nor loads
// code (@include, @load); -f, and gawk's options that write profiles or
// dumps (-o, -p, -d) or load code (-i, -l, -e), are refused.
func awkArgs(_ *prover, args []pword) error {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit() {
			return errors.New("an option or the program is only known at run time")
		}
		v := a.val
		if v == "--" {
			i++
			break
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		switch {
		case v == "-F" || v == "-v":
			i++
			if i >= len(args) || !args[i].lit() {
				return fmt.Errorf("%s without a literal value", v)
			}
		case strings.HasPrefix(v, "-F") || strings.HasPrefix(v, "-v"):
		default:
			return fmt.Errorf("%s is not an awk option known to be read-only", v)
		}
	}
	if i >= len(args) || !args[i].lit() {
		return errors.New("no literal program")
	}
	prog := args[i].val
	for _, bad := range []string{"system", "getline", "|", "@"} {
		if strings.Contains(prog, bad) {
			return fmt.Errorf("the program uses %q", bad)
		}
	}
	for j := strings.IndexByte(prog, '>'); j >= 0; j = strings.IndexByte(prog, '>') {
		if j+1 >= len(prog) || prog[j+1] != '=' {
			return errors.New("the program may redirect output into a file")
		}
		prog = prog[j+2:]
	}
	for _, a := range args[i+1:] {
		if a.kind == wordDyn {
			return errors.New("an operand is only known at run time")
		}
	}
	return nil
}

// rgArgs allows ripgrep without --pre (runs a program on every file) and
// -z/--search-zip (runs decompressors).
func rgArgs(_ *prover, args []pword) error {
	for _, a := range args {
		if a.kind == wordDyn {
			return errors.New("an argument is only known at run time")
		}
		if !a.lit() {
			continue
		}
		if a.val == "--" {
			break
		}
		if shortHas(a.val, "z") || refusedLong(a.val, "--pre", "--pre-glob", "--search-zip") {
			return fmt.Errorf("%s runs other programs", a.val)
		}
	}
	return nil
}

// fdArgs allows fd without -x/-X/--exec/--exec-batch.
func fdArgs(_ *prover, args []pword) error {
	for _, a := range args {
		if a.kind == wordDyn {
			return errors.New("an argument is only known at run time")
		}
		if !a.lit() {
			continue
		}
		if a.val == "--" {
			break
		}
		if shortHas(a.val, "xX") || refusedLong(a.val, "--exec", "--exec-batch") {
			return fmt.Errorf("%s runs other programs", a.val)
		}
	}
	return nil
}

// xargsArgs allows xargs running a program that takes any argument
// (anyArgs): what xargs appends is only known at run time.
func xargsArgs(_ *prover, args []pword) error {
	if err := literal(args); err != nil {
		return err
	}
	i := 0
	for ; i < len(args); i++ {
		v := args[i].val
		switch {
		case v == "-0" || v == "--null" || v == "-r" || v == "--no-run-if-empty" || v == "-t" || v == "--verbose" || v == "-x" || v == "--exit":
		case v == "-n" || v == "-L" || v == "-P" || v == "-d" || v == "-s" || v == "-I":
			i++
		case len(v) > 2 && (strings.HasPrefix(v, "-n") || strings.HasPrefix(v, "-L") || strings.HasPrefix(v, "-P") ||
			strings.HasPrefix(v, "-d") || strings.HasPrefix(v, "-s") || strings.HasPrefix(v, "-I")):
		case v == "--":
			i++
			goto run
		case strings.HasPrefix(v, "-"):
			return fmt.Errorf("%s is not an xargs option known to be read-only", v)
		default:
			goto run
		}
	}
run:
	if i >= len(args) {
		return nil // echo
	}
	if name := args[i].val; !anyArgPrograms[name] {
		return fmt.Errorf("xargs runs %s with arguments only known at run time", name)
	}
	return nil
}
