package shell

import "strings"

// Any program may write the files its arguments name: the analyzer knows
// how cp, sed -i, tar and git write, but not gunzip's, shuf -o's, uniq's
// second operand, xxd -r's, iconv -o's, vim -c's or those of a program it
// has never heard of. So an argument naming a protected path (code that
// runs later: git hooks and config, rc files, editor tasks) is judged a
// possible write to it, and asks, for every program but those below,
// which only read what their arguments name. This is the class rule
// behind the per-program rules: a writer the analyzer does not model
// still cannot change a protected path without a question.

// readOnlyPrograms only read the files their operands name (or take no
// file operands); their output goes to standard output or nowhere.
var readOnlyPrograms = map[string]bool{
	"cat": true, "tac": true, "head": true, "tail": true, "less": true, "more": true, "most": true, "bat": true, "batcat": true,
	"grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true, "ack": true, "zgrep": true, "zcat": true,
	"bzcat": true, "xzcat": true, "zstdcat": true, "lz4cat": true, "zless": true, "zmore": true,
	"wc": true, "ls": true, "dir": true, "tree": true, "stat": true, "file": true, "du": true, "df": true,
	"diff": true, "cmp": true, "comm": true, "colordiff": true, "delta": true,
	"md5sum": true, "sha1sum": true, "sha224sum": true, "sha256sum": true, "sha384sum": true, "sha512sum": true,
	"b2sum": true, "cksum": true, "sum": true, "b3sum": true,
	"od": true, "hexdump": true, "hd": true, "strings": true, "nl": true, "cut": true, "paste": true, "join": true,
	"expand": true, "unexpand": true, "fold": true, "fmt": true, "pr": true, "column": true, "rev": true,
	"readlink": true, "realpath": true, "basename": true, "dirname": true, "test": true, "[": true, "[[": true,
	"echo": true, "true": true, "false": true, "jq": true, "gojq": true, "base64": true, "base32": true,
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "source": true, ".": true,
	"which": true, "type": true, "whereis": true, "command": true, "pwd": true, "id": true, "date": true,
	"namei": true, "lsattr": true, "getfacl": true, "wc-l": true, "look": true, "shasum": true,
}

// dispatchers run another command their arguments spell; that command is
// judged on its own (wrappers.go, runners.go), not as their operand.
var dispatchers = map[string]bool{
	"exec": true, "builtin": true, "nohup": true, "setsid": true, "env": true, "nice": true, "ionice": true,
	"timeout": true, "gtimeout": true, "stdbuf": true, "xargs": true, "gxargs": true, "find": true, "gfind": true,
	"fd": true, "fdfind": true, "parallel": true, "watch": true, "time": true, "sudo": true, "doas": true,
	"eval": true, "busybox": true, "toybox": true, "chronic": true, "unbuffer": true, "flock": true, "taskset": true,
	"chrt": true, "strace": true, "ltrace": true, "firejail": true, "bwrap": true, "proot": true,
}

// modelled are programs whose writes the analyzer derives in full from
// their arguments (writes.go, sed.go, archives.go, paths.go): their other
// operands are read, and judging them again would ask about a copy *from*
// a protected path.
var modelled = map[string]bool{
	"cp": true, "gcp": true, "mv": true, "gmv": true, "install": true, "ginstall": true, "ln": true, "link": true,
	"tee": true, "sponge": true, "touch": true, "mkdir": true, "mkfifo": true, "mknod": true, "fallocate": true,
	"truncate": true, "chmod": true, "chown": true, "chgrp": true, "sort": true, "split": true, "csplit": true,
	"patch": true, "rm": true, "unlink": true, "rmdir": true, "shred": true, "srm": true, "wipe": true, "dd": true,
	"sed": true, "gsed": true, "tar": true, "gtar": true, "bsdtar": true, "unzip": true, "zip": true, "7z": true,
	"7za": true, "7zr": true, "unrar": true, "cpio": true, "ar": true, "rsync": true, "cd": true, "pushd": true,
}

// writeFlags are programs that read their operands unless given one of
// these flags (gofmt -l lists, gofmt -w rewrites).
var writeFlags = map[string][]string{
	"gofmt": {"-w"}, "goimports": {"-w"}, "shfmt": {"-w", "--write"}, "prettier": {"-w", "--write"},
	"clang-format": {"-i"}, "eslint": {"--fix"}, "autopep8": {"-i", "--in-place"}, "yapf": {"-i", "--in-place"},
	"isort": {}, "black": {}, "rustfmt": {}, "stylua": {},
}

func writes(name string, argv []arg) bool {
	flags, ok := writeFlags[name]
	if !ok {
		return true
	}
	if len(flags) == 0 {
		return true // rewrites its operands always
	}
	for _, x := range argv[1:] {
		for _, f := range flags {
			if !x.lit || x.val == f || strings.HasPrefix(x.val, f+"=") {
				return true
			}
		}
	}
	return false
}

// gitReadOnly are git subcommands that change no file an argument names
// (add and commit write git's own objects and index, which are not
// protected).
var gitReadOnly = map[string]bool{
	"diff": true, "show": true, "log": true, "status": true, "blame": true, "annotate": true, "ls-files": true,
	"ls-tree": true, "grep": true, "add": true, "commit": true, "cat-file": true, "rev-parse": true,
	"shortlog": true, "whatchanged": true, "check-ignore": true, "check-attr": true, "hash-object": true,
	"difftool": true, "range-diff": true, "describe": true, "name-rev": true,
}

// decompressors write each operand with its compression suffix removed
// (gunzip x.envrc.gz writes x.envrc); dflag is the flag that makes the
// compressor of the same name decompress.
var decompressors = map[string]string{
	"gunzip": "", "unxz": "", "unlzma": "", "bunzip2": "", "unzstd": "", "unlz4": "", "uncompress": "",
	"gzip": "-d", "xz": "-d", "lzma": "-d", "bzip2": "-d", "zstd": "-d", "lz4": "-d", "brotli": "-d",
	"lzop": "-d", "pigz": "-d", "pbzip2": "-d", "pixz": "-d", "plzip": "-d", "lzip": "-d", "compress": "-d",
}

var compressSuffixes = []string{".tgz", ".gz", ".xz", ".lzma", ".bz2", ".tbz2", ".zst", ".zstd", ".lz4", ".br", ".lzo", ".lz", ".z", ".Z"}

// operandWrites asks when an argument of name, a program whose writes the
// analyzer does not model or models only in part, names a protected path.
func (a *analyzer) operandWrites(name string, argv []arg, sc *scope, cmd string) {
	if len(argv) < 2 || readOnlyPrograms[name] || dispatchers[name] || modelled[name] || !writes(name, argv) {
		return
	}
	if name == "git" {
		if sub := gitSubcommand(argv); gitReadOnly[sub] {
			return
		}
	}
	dflag, decomp := decompressors[name]
	if decomp && dflag != "" {
		decomp = false
		for _, x := range argv[1:] {
			if x.lit && (x.val == dflag || x.val == "--decompress" || x.val == "--uncompress" ||
				(len(x.val) > 1 && x.val[0] == '-' && x.val[1] != '-' && strings.Contains(x.val, "d"))) {
				decomp = true
			}
		}
	}
	verb := name + " may write to"
	for _, x := range argv[1:] {
		if !x.lit && !x.glob {
			continue // a word known only at run time: the per-program rules judge it
		}
		if x.many {
			a.manyWrite(name, x, cmd)
			continue
		}
		v1, v2 := operandValues(x.val)
		for _, v := range [2]string{v1, v2} {
			if v == "" {
				continue
			}
			a.operandPath(v, x.glob, sc, cmd, verb)
			if decomp {
				for _, suf := range compressSuffixes {
					if out, ok := strings.CutSuffix(v, suf); ok && out != "" && !strings.HasSuffix(out, "/") {
						if suf == ".tgz" || suf == ".tbz2" {
							out += ".tar"
						}
						a.operandPath(out, x.glob, sc, cmd, name+" decompresses to")
						break
					}
				}
			}
		}
	}
}

// operandPath asks when v, a path as written, names a protected path.
func (a *analyzer) operandPath(v string, glob bool, sc *scope, cmd, verb string) {
	if v == "" || (!glob && !a.heads.may(v)) {
		return
	}
	ps, _ := a.resolve(v, sc)
	for _, p := range ps {
		if a.protectWrite(p, glob, cmd, verb) {
			return
		}
	}
}

// manyWrite judges a program applied to every file found below a root
// (find -exec's {}, xargs's input): any of them may be a protected path.
func (a *analyzer) manyWrite(name string, x arg, cmd string) {
	root := x.val
	if !x.lit {
		root = x.raw
	}
	a.ask(ruleProtectedPath, name+" is applied to every file found under "+root+
		", which may include protected paths (git hooks and config, rc files, editor and agent settings): "+
		"name the files, or run a program that only reads them", cmd)
}

// operandValues returns the paths an argument may name: the word itself,
// and the value of an option spelled with it (--output=FILE, of=FILE,
// -oFILE). Two results, "" for none, so the hot path allocates nothing.
func operandValues(v string) (string, string) {
	if v == "" || v == "-" || v == "--" {
		return "", ""
	}
	if v[0] != '-' {
		if k, val, ok := strings.Cut(v, "="); ok && k != "" && !strings.ContainsAny(k, "/.") {
			return v, val // dd's of=FILE, make's VAR=VALUE
		}
		return v, ""
	}
	if strings.HasPrefix(v, "--") {
		if _, val, ok := strings.Cut(v, "="); ok {
			return val, ""
		}
		return "", ""
	}
	if len(v) > 2 {
		return v[2:], "" // -oFILE; a cluster of flags names no protected path
	}
	return "", ""
}

// gitSubcommand returns git's subcommand, past its global options.
func gitSubcommand(argv []arg) string {
	for i := 1; i < len(argv); i++ {
		v := argv[i].val
		switch {
		case !argv[i].lit:
			return ""
		case v == "-C" || v == "-c" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--config-env":
			i++
		case strings.HasPrefix(v, "-"):
		default:
			return v
		}
	}
	return ""
}
