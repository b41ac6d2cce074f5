package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// gitGlobalOK are the options before git's subcommand the proof accepts:
// none changes which repository, config or program is used (-c, -C,
// --git-dir, --work-tree, --exec-path, --config-env are refused).
var gitGlobalOK = map[string]bool{
	"--no-pager": true, "-P": true, "--no-optional-locks": true, "--no-replace-objects": true,
	"--literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true, "--icase-pathspecs": true,
}

// gitReadSubs are git's subcommands that read the repository and print.
// Each is a builtin, so no alias can stand for it. A nil check means the
// subcommand's options are judged by gitRefused alone; the others are
// read-only only in some forms (git branch lists, git branch x creates).
var gitReadSubs = map[string]func(rest []pword) error{
	"status": nil, "diff": nil, "log": nil, "show": nil, "blame": nil, "annotate": nil,
	"shortlog": nil, "describe": nil, "rev-parse": nil, "rev-list": nil, "ls-files": nil,
	"ls-tree": nil, "cat-file": nil, "show-ref": nil, "merge-base": nil, "count-objects": nil,
	"for-each-ref": nil, "name-rev": nil, "diff-tree": nil, "diff-files": nil, "diff-index": nil,
	"grep": nil, "whatchanged": nil, "cherry": nil, "version": nil, "check-ignore": nil,
	"check-attr": nil, "show-branch": nil, "var": nil,
	"branch":   gitListing(true),
	"tag":      gitListing(false), // git tag -v runs gpg
	"remote":   gitSubOnly("", "-v", "--verbose", "get-url"),
	"stash":    gitSubOnly("list", "show"),
	"reflog":   gitSubOnly("", "show"),
	"worktree": gitSubOnly("list"),
	"config":   gitConfigRead,
}

// gitRefused are options that write a file (--output), run a program the
// repository's config or the command names (--ext-diff, --textconv,
// --filters, git grep's --open-files-in-pager and -O, --exec,
// --upload-pack), or run gpg (--show-signature, -v of tag). git takes
// abbreviations of long options, so every abbreviation is refused too.
var gitRefused = []string{"--output", "--output-directory", "--ext-diff", "--textconv", "--filters",
	"--open-files-in-pager", "--exec", "--upload-pack", "--show-signature"}

func gitArgs(p *prover, args []pword) error {
	p.git = true
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit() {
			return errors.New("an option is only known at run time")
		}
		if !strings.HasPrefix(a.val, "-") {
			break
		}
		if !gitGlobalOK[a.val] {
			return fmt.Errorf("the option %s may change which repository, config or program git uses", a.val)
		}
	}
	if i >= len(args) {
		return errors.New("no subcommand")
	}
	sub := args[i].val
	check, ok := gitReadSubs[sub]
	if !ok {
		return fmt.Errorf("git %s is not a subcommand known to be read-only", sub)
	}
	rest := args[i+1:]
	for _, a := range rest {
		if a.lit() && a.val == "--" {
			break // pathspecs follow; patterns are fine there
		}
		if !a.lit() {
			return errors.New("an argument is only known at run time (it may be an option)")
		}
		if refusedLong(a.val, gitRefused...) {
			return fmt.Errorf("%s writes a file or runs a program", a.val)
		}
		if sub == "grep" && shortHas(a.val, "O") {
			return errors.New("-O opens the matches in a pager")
		}
		if strings.Contains(a.val, "%G") {
			return errors.New("a %G format runs gpg to check signatures")
		}
	}
	if check != nil {
		return check(rest)
	}
	return nil
}

// gitListing is git branch and git tag: they list when given no operand,
// or with -l/--list (operands are patterns then); options are those that
// select or format the listing, some of which take a value. verbose says
// whether -v lists (git branch) rather than verifies (git tag).
func gitListing(verbose bool) func([]pword) error {
	withValue := []string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"}
	return func(rest []pword) error {
		list, operands := false, 0
		for i := 0; i < len(rest); i++ {
			v := rest[i].val
			name, _, eq := strings.Cut(v, "=")
			switch {
			case v == "-l" || v == "--list":
				list = true
			case v == "-a" || v == "--all" || v == "-r" || v == "--remotes" || verbose && (v == "-v" || v == "-vv") ||
				v == "--show-current" || v == "--no-color" || v == "--color" || v == "--column" || v == "--no-column" ||
				v == "-i" || v == "--ignore-case" || v == "--omit-empty" || strings.HasPrefix(v, "-n") && len(v) <= 4:
			case len(v) > 2 && strings.HasPrefix(v, "--") && contains(withValue, name):
				if !eq && i+1 < len(rest) && !strings.HasPrefix(rest[i+1].val, "-") {
					i++
				}
			case v == "--":
				operands += len(rest) - i - 1
				i = len(rest)
			case strings.HasPrefix(v, "-"):
				return fmt.Errorf("%s may change a branch or tag", v)
			default:
				operands++
			}
		}
		if operands > 0 && !list {
			return errors.New("an operand creates a branch or tag (use --list to list by pattern)")
		}
		return nil
	}
}

// gitSubOnly allows the sub-subcommands given ("" for none) followed by
// anything gitRefused lets through.
func gitSubOnly(subs ...string) func([]pword) error {
	return func(rest []pword) error {
		first := ""
		for _, a := range rest {
			if !strings.HasPrefix(a.val, "-") {
				first = a.val
				break
			}
			if !contains(subs, a.val) && !contains(subs, "") {
				return fmt.Errorf("%s may change the repository", a.val)
			}
		}
		if !contains(subs, first) {
			return fmt.Errorf("%q may change the repository", first)
		}
		return nil
	}
}

// gitConfigRead allows git config when it only reads: --get, --get-all,
// --get-regexp, --list, or the subcommands get and list.
func gitConfigRead(rest []pword) error {
	reads := false
	for _, a := range rest {
		switch a.val {
		case "--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list":
			reads = true
		case "--show-origin", "--show-scope", "--name-only", "--null", "-z", "--local", "--global",
			"--system", "--includes", "--no-includes", "--bool", "--int", "--path":
		default:
			if strings.HasPrefix(a.val, "-") {
				return fmt.Errorf("%s may write the config", a.val)
			}
		}
	}
	if !reads {
		return errors.New("git config without --get or --list may write the config")
	}
	return nil
}

// goArgs allows go version, go env (not -w or -u), go list and go vet.
// go list and go vet read the module's source and print; the toolchain
// they may run (the compiler for vet, cgo's C preprocessor with flags go
// itself vets) runs in the sandbox, whose network is off (so neither a
// module nor a GOTOOLCHAIN download happens) and whose writes outside the
// work dir are stopped or private (build cache). Refused: options that run
// a program (-toolexec, -exec, -vettool), replace files (-overlay,
// -modfile), may rewrite go.mod (-mod=mod) or pass flags to the
// toolchain (-gcflags, -ldflags, -asmflags, -gccgoflags); -json and -f
// print. go may run git for version-control data, so the repository's git
// config is checked as for git.
func goArgs(p *prover, args []pword) error {
	p.git = true
	if err := literal(args); err != nil {
		return err
	}
	if len(args) == 0 {
		return errors.New("no subcommand")
	}
	rest := args[1:]
	switch args[0].val {
	case "version":
		return nil
	case "env":
		for _, a := range rest {
			if a.val == "-w" || a.val == "-u" || a.val == "--w" || a.val == "--u" {
				return errors.New("go env -w and -u write go's config")
			}
		}
		return nil
	case "list", "vet":
		for _, a := range rest {
			v := strings.TrimPrefix(a.val, "-")
			name, val, _ := strings.Cut(v, "=")
			if !strings.HasPrefix(a.val, "-") {
				continue
			}
			switch name {
			case "toolexec", "exec", "vettool", "overlay", "modfile", "gcflags", "ldflags", "asmflags", "gccgoflags", "pgo", "C":
				return fmt.Errorf("%s runs a program, replaces files or changes directory", a.val)
			case "mod":
				if val != "readonly" && val != "vendor" {
					return errors.New("-mod other than readonly or vendor may rewrite go.mod")
				}
			}
		}
		return nil
	}
	return fmt.Errorf("go %s is not a subcommand known to be read-only", args[0].val)
}

// gitInertKeys are the config keys a repository may set and git still be
// proven read-only: none names a program, a pager, a hook, a filter, an
// include or a driver. A key in a section [section "sub"] is matched as
// section.*.key.
var gitInertKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true,
	"core.logallrefupdates": true, "core.ignorecase": true, "core.precomposeunicode": true,
	"core.symlinks": true, "core.autocrlf": true, "core.eol": true, "core.safecrlf": true,
	"remote.*.url": true, "remote.*.fetch": true, "remote.*.pushurl": true, "remote.*.tagopt": true,
	"remote.*.prune": true, "remote.*.mirror": true,
	"branch.*.remote": true, "branch.*.merge": true, "branch.*.rebase": true, "branch.*.pushremote": true,
	"branch.*.description": true,
	"user.name":            true, "user.email": true, "init.defaultbranch": true,
	"pull.rebase": true, "pull.ff": true, "push.default": true, "push.autosetupremote": true,
	"fetch.prune": true, "gc.auto": true, "color.ui": true,
	"extensions.objectformat": true, "extensions.refstorage": true, "extensions.worktreeconfig": true,
}

// checkGitConfig finds the repository that contains dir and refuses the
// proof unless its config (the common one and the worktree's own) sets
// only inert keys. Only the repository's files are read: the user's own
// config (~/.gitconfig, /etc/gitconfig) is the user's, and commands in
// the sandbox cannot write it. A directory with no repository above it is
// fine: git then reads no repository config.
func checkGitConfig(dir string) error {
	gitDir, common, err := findGitDir(dir)
	if err != nil || gitDir == "" {
		return err
	}
	files := []string{filepath.Join(common, "config"), filepath.Join(gitDir, "config.worktree")}
	if gitDir != common {
		files = append(files, filepath.Join(gitDir, "config"))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: the git config %s cannot be read: %v", ErrNotProven, f, err)
		}
		if err := inertGitConfig(data); err != nil {
			return fmt.Errorf("%w: the git config %s %v", ErrNotProven, f, err)
		}
	}
	return nil
}

// findGitDir walks up from dir to the first .git: a directory, or a file
// "gitdir: PATH" (a worktree or submodule) whose commondir names the
// shared one. It returns "" when there is none.
func findGitDir(dir string) (gitDir, common string, err error) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, serr := os.Stat(p)
		switch {
		case serr == nil && fi.IsDir():
			return p, p, nil
		case serr == nil:
			data, rerr := os.ReadFile(p)
			if rerr != nil {
				return "", "", fmt.Errorf("%w: %v", ErrNotProven, rerr)
			}
			g, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
			if !ok {
				return "", "", fmt.Errorf("%w: %s is not a gitdir file", ErrNotProven, p)
			}
			g = strings.TrimSpace(g)
			if !filepath.IsAbs(g) {
				g = filepath.Join(d, g)
			}
			common = g
			if c, cerr := os.ReadFile(filepath.Join(g, "commondir")); cerr == nil {
				common = strings.TrimSpace(string(c))
				if !filepath.IsAbs(common) {
					common = filepath.Join(g, common)
				}
			}
			return filepath.Clean(g), filepath.Clean(common), nil
		case !errors.Is(serr, os.ErrNotExist):
			return "", "", fmt.Errorf("%w: %v", ErrNotProven, serr)
		}
		if parent := filepath.Dir(d); parent == d {
			return "", "", nil
		}
	}
}

// inertGitConfig parses a git config file well enough to list its keys and
// refuses any key not in gitInertKeys. What it cannot read is refused.
func inertGitConfig(data []byte) error {
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return errors.New("has a section header it cannot read")
			}
			head := line[1:end]
			name, sub, hasSub := strings.Cut(head, " ")
			section = strings.ToLower(strings.TrimSpace(name))
			if hasSub && strings.TrimSpace(sub) != "" {
				section += ".*"
			} else if dot := strings.IndexByte(section, '.'); dot >= 0 {
				section = section[:dot] + ".*" // [branch.main] old syntax
			}
			line = strings.TrimSpace(line[end+1:])
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		if strings.HasSuffix(line, "\\") {
			return errors.New("has a continued line it does not read")
		}
		key, _, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if section == "" || !gitInertKeys[section+"."+key] {
			return fmt.Errorf("sets %s.%s, which may run a program or change what git reads", section, key)
		}
	}
	return sc.Err()
}
