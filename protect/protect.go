// Package protect is the one list of protected paths: files whose content
// runs code, or changes what a tool does or may do, later and outside the
// sandbox (git hooks and config, shell rc files, editor tasks, agent and
// MCP config, rein's own config). Any write to them asks, in every mode,
// and is refused where nobody can answer. The list is built in and may be
// extended by the user's config, never shrunk by a project's.
//
// It is a leaf: the scope gate (file tools), the shell gate (shell writes)
// and config use it, and it imports nothing of rein's. It matches names
// only; resolving symbolic links and ".." before asking is the caller's
// job (the scope gate matches both the path as written and as resolved).
package protect

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Rule is one protected pattern: a path relative to a root (the work dir,
// or home for the user's own files), and why a write there matters.
type Rule struct {
	// Pattern is slash-separated. A trailing "/" protects a directory and
	// everything below it; a "*" matches within one path element
	// (path.Match); anything else is an exact path. A pattern matches at
	// any depth (".git/" protects sub/.git/hooks too: a nested repository's
	// hooks run as well). Matching is case-insensitive, since macOS and
	// Windows file systems are.
	Pattern string
	// Why says what would run, and when: "git runs it on later git
	// commands". It is shown to the person asked.
	Why string
}

// Builtin returns the built-in rules, a fresh copy each call.
func Builtin() []Rule {
	return []Rule{
		// git: hooks, config, attributes and submodules run code later.
		{".git/", "git reads it: hooks and config keys such as core.fsmonitor run code on the user's next git command"},
		{".gitmodules", "git reads it on submodule commands: urls and update commands can run code"},
		{".gitconfig", "git reads it: config keys such as core.fsmonitor and aliases run code"},
		{".config/git/", "git reads it: config, attributes and hooks run code on the user's next git command"},
		{".gitattributes", "git applies its filters and diff drivers, which run code, on later git commands"},
		{".husky/", "git runs these hooks (through core.hooksPath) on the user's next commit or push"},
		{".pre-commit-config.yaml", "pre-commit runs the hooks it names on the user's next commit"},
		{".hg/", "Mercurial reads it: hooks in .hg/hgrc run code on the user's next hg command"},
		{".hgrc", "Mercurial reads it: hooks run code on the user's next hg command"},
		// Shells.
		{".bashrc", "bash runs it at the user's next terminal"},
		{".bash_profile", "bash runs it at the user's next login"},
		{".bash_login", "bash runs it at the user's next login"},
		{".bash_logout", "bash runs it when the user logs out"},
		{".profile", "the shell runs it at the user's next login"},
		{".zshrc", "zsh runs it at the user's next terminal"},
		{".zprofile", "zsh runs it at the user's next login"},
		{".zshenv", "zsh runs it for every zsh started"},
		{".zlogin", "zsh runs it at the user's next login"},
		{".zlogout", "zsh runs it when the user logs out"},
		{".kshrc", "ksh runs it at the user's next terminal"},
		{".cshrc", "csh runs it at the user's next terminal"},
		{".tcshrc", "tcsh runs it at the user's next terminal"},
		{".login", "csh runs it at the user's next login"},
		{".inputrc", "readline reads it in every shell: key bindings can type commands"},
		{".config/fish/", "fish runs it at the user's next terminal"},
		{".envrc", "direnv runs it when the user enters the directory"},
		{".config/direnv/", "direnv reads it: what it runs and trusts"},
		// Editors and IDEs.
		{".vscode/", "the editor runs its tasks and applies its settings, which can start programs"},
		{"*.code-workspace", "the editor runs its tasks and applies its settings, which can start programs"},
		{".idea/", "the IDE runs its run configurations and applies its settings"},
		{".devcontainer/", "the editor builds and runs the container it describes"},
		{".devcontainer.json", "the editor builds and runs the container it describes"},
		{".zed/", "the editor runs its tasks and applies its settings"},
		{".exrc", "vi and vim may run it when started in this directory"},
		{".nvimrc", "neovim may run it when started in this directory"},
		{".nvim.lua", "neovim may run it when started in this directory"},
		{".vimrc", "vim may run it when started in this directory (exrc)"},
		{".gvimrc", "gvim may run it when started in this directory (exrc)"},
		{".pdbrc", "python's debugger runs it when started in this directory"},
		{"mise.toml", "mise runs its tasks and hooks when the user enters the directory"},
		{".mise.toml", "mise runs its tasks and hooks when the user enters the directory"},
		{".tool-versions", "asdf and mise install and run the versions it names"},
		// Agents and MCP clients: their settings, hooks and servers.
		{".mcp.json", "MCP clients start the servers it names"},
		{".cursor/", "the editor's agent reads its rules, hooks and MCP servers"},
		{".claude/", "Claude Code reads its settings, hooks and MCP servers"},
		{".codex/", "Codex reads its config and MCP servers"},
		{".gemini/", "Gemini CLI reads its settings and MCP servers"},
		{".windsurf/", "the editor's agent reads its rules and MCP servers"},
		{".rein/", "rein reads its config: the next session's rights"},
		{".config/rein/", "rein reads the user's config: every session's rights"},
		// Tools whose config runs code or changes what they do.
		{".ripgreprc", "ripgrep reads it through RIPGREP_CONFIG_PATH: options such as --pre run code"},
		{".npmrc", "npm reads it: settings such as script-shell and node-options run code on the next npm command"},
		{".yarnrc", "yarn reads it on the next yarn command"},
		{".yarnrc.yml", "yarn reads it: yarnPath runs a script on the next yarn command"},
		{".pnpmfile.cjs", "pnpm runs it on the next install"},
		{".pypirc", "pip and twine read it: where packages go, with which credentials"},
		{".cargo/config", "cargo reads it: aliases and runners run code on the next cargo command"},
		{".cargo/config.toml", "cargo reads it: aliases and runners run code on the next cargo command"},
		{".curlrc", "curl reads it: options change where every later curl sends and writes"},
		{".wgetrc", "wget reads it: options change where every later wget sends and writes"},
		{".ssh/", "ssh reads it: authorized keys, config and ProxyCommand run code or grant access"},
	}
}

// List is a set of rules: the built-in ones and any added. The zero List
// and a nil *List are the built-in list, so a list that was never set up
// protects, rather than nothing.
type List struct {
	extra []compiled
	ix    *index // the built-in rules and extra, indexed; nil: builtinIndex
}

// compiled is a rule with its pattern normalized and split, once.
type compiled struct {
	Rule
	elems []string
	glob  bool // some element has a wildcard: match with path.Match
	dir   bool
	// suffix[i], for an element "*" and a literal (*.code-workspace), is
	// the literal: the element matches a name that ends with it, as
	// path.Match would say, without its scan.
	suffix []string
}

func compile(rules []Rule) []compiled {
	out := make([]compiled, len(rules))
	for i, r := range rules {
		n := normalize(r.Pattern)
		out[i] = compiled{Rule: r, elems: strings.Split(n, "/"), glob: isPattern(n), dir: strings.HasSuffix(r.Pattern, "/")}
		if out[i].glob {
			out[i].suffix = make([]string, len(out[i].elems))
			for j, e := range out[i].elems {
				if lit, ok := strings.CutPrefix(e, "*"); ok && lit != "" && !isPattern(lit) {
					out[i].suffix[j] = lit
				}
			}
		}
	}
	return out
}

// builtin is the built-in rules compiled, made once and never changed.
var builtin = sync.OnceValue(func() []compiled { return compile(Builtin()) })

// isPattern reports whether s has a character path.Match treats specially.
func isPattern(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// builtinIndex indexes the built-in rules alone.
var builtinIndex = sync.OnceValue(func() *index { return newIndex(builtin()) })

// index finds the rules a path may match without trying each: a rule
// matches only where the path has an element equal to its first, unless
// that first element is a pattern. Tried in the list's order, the first
// that matches wins, as it would trying every rule in turn.
type index struct {
	rules   []compiled       // in the list's order: the built-in ones first
	byFirst map[string][]int // a literal first element: the rules' positions, ascending
	globs   []int            // the rules whose first element is a pattern, ascending
}

func newIndex(rules []compiled) *index {
	ix := &index{rules: rules, byFirst: map[string][]int{}}
	for i, c := range rules {
		if first := c.elems[0]; isPattern(first) {
			ix.globs = append(ix.globs, i)
		} else {
			ix.byFirst[first] = append(ix.byFirst[first], i)
		}
	}
	return ix
}

// match returns the position of the first rule that matches elems, or -1.
func (ix *index) match(elems []string) int {
	best := -1
	try := func(i int) {
		if (best < 0 || i < best) && ix.rules[i].matches(elems) {
			best = i
		}
	}
	for _, e := range elems {
		for _, i := range ix.byFirst[e] {
			try(i)
		}
	}
	for _, i := range ix.globs {
		try(i)
	}
	return best
}

// Default returns the built-in list.
func Default() *List { return &List{} }

// With returns a list with extra rules added. Rules are only ever added:
// there is no way to remove a built-in one. Check them with Valid first.
func (l *List) With(extra ...Rule) *List {
	n := &List{}
	if l != nil {
		n.extra = append(n.extra, l.extra...)
	}
	n.extra = append(n.extra, compile(extra)...)
	if len(n.extra) > 0 {
		n.ix = newIndex(append(slices.Clip(builtin()), n.extra...))
	}
	return n
}

// Rules returns the list's rules, the built-in ones first.
func (l *List) Rules() []Rule {
	rules := Builtin()
	if l != nil {
		for _, c := range l.extra {
			rules = append(rules, c.Rule)
		}
	}
	return rules
}

// Match reports whether rel, a slash- or OS-separated path relative to the
// root it will be written under, is protected, and by which rule. rel is
// cleaned first; a path that climbs out ("../x") is matched on what is left
// after the climb, so callers should resolve paths against the root first.
// An absolute path is matched on all its elements: a pattern matches at any
// depth.
//
// Names are compared as a case-insensitive file system (macOS, Windows)
// would see them: in any case, with trailing dots and spaces of an element
// dropped (Windows ignores them: ".git." is ".git") and with characters
// that are invisible and ignored by HFS+ (zero-width joiners and the like)
// removed.
func (l *List) Match(rel string) (Rule, bool) {
	p := rel
	if !normal(p) {
		if p = normalize(rel); p == "" {
			return Rule{}, false
		}
	}
	ix := builtinIndex()
	if l != nil && l.ix != nil {
		ix = l.ix
	}
	if i := ix.match(strings.Split(p, "/")); i >= 0 {
		return ix.rules[i].Rule, true
	}
	return Rule{}, false
}

// normal reports whether p is as normalize would make it, so that it can
// be matched as it is: ASCII without upper case or backslashes, no empty,
// "." or ".." element, none ending in a dot or a space. Most paths of a
// work dir are.
func normal(p string) bool {
	if p == "" {
		return false
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) {
			c := p[i]
			if c >= utf8.RuneSelf || c == '\\' || 'A' <= c && c <= 'Z' {
				return false
			}
			if c != '/' {
				continue
			}
		}
		e := p[start:i]
		if e == "" || e[len(e)-1] == '.' || e[len(e)-1] == ' ' {
			return false // also "." and ".."
		}
		start = i + 1
	}
	return true
}

// normalize cleans p into lower-case slash-separated elements without a
// leading or trailing slash.
func normalize(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	if !ascii(p) {
		p = strings.Map(func(r rune) rune {
			if ignorable(r) {
				return -1
			}
			return r
		}, p)
		// Upper then lower: a fold that also meets letters only one of
		// the two maps (the dotless i, the Kelvin sign), erring toward a
		// match.
		p = strings.ToUpper(p)
	}
	elems := strings.Split(strings.ToLower(p), "/")
	for i, e := range elems {
		if e != "." && e != ".." {
			elems[i] = strings.TrimRight(e, ". ")
		}
	}
	return strings.TrimPrefix(path.Clean("/"+strings.Join(elems, "/")), "/")
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ignorable reports whether r is a character HFS+ ignores in names, or one
// that is invisible on screen: zero-width spaces and joiners, direction
// marks and embeddings, word joiners and the byte-order mark.
func ignorable(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F,
		r == 0xFEFF, r == 0x00AD, r == 0x034F, r == 0x180E:
		return true
	}
	return false
}

// matches reports whether the pattern's elements occur in elems: for a
// directory pattern anywhere (the directory itself or anything below it),
// for a file pattern at the end.
func (c *compiled) matches(elems []string) bool {
	n := len(c.elems)
	for i := 0; i+n <= len(elems); i++ {
		if !c.dir && i+n != len(elems) {
			continue
		}
		if c.elemsMatch(elems[i : i+n]) {
			return true
		}
	}
	return false
}

func (c *compiled) elemsMatch(got []string) bool {
	for i, pat := range c.elems {
		if !c.glob {
			if pat != got[i] {
				return false
			}
			continue
		}
		if lit := c.suffix[i]; lit != "" {
			if !strings.HasSuffix(got[i], lit) {
				return false
			}
			continue
		}
		if ok, err := path.Match(pat, got[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// ErrBadRule marks a rule Valid refuses.
var ErrBadRule = errors.New("bad protected-path rule")

// Valid checks a rule from a config file: a relative, slash-separated
// pattern that path.Match accepts, without "." or ".." elements.
func Valid(r Rule) error {
	p := r.Pattern
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrBadRule, p, why) }
	switch {
	case strings.TrimSpace(p) == "" || strings.Trim(p, "/") == "":
		return bad("it is empty")
	case strings.ContainsRune(p, 0):
		return bad("it contains a NUL byte")
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.Contains(p, "\\"):
		return bad("write it relative, with / as the separator: it matches at any depth of every root")
	}
	for _, e := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		switch e {
		case "", ".", "..":
			return bad("it has an empty, . or .. element")
		}
		if _, err := path.Match(e, ""); err != nil {
			return bad("it is not a valid glob: " + err.Error())
		}
	}
	return nil
}

// ExecutableGitKey reports whether setting the git config key to value
// makes git run code (or load config, hooks or programs from elsewhere)
// later. Keys are compared case-insensitively (git's sections and names
// are; a subsection's case does not matter to which keys run code). value
// matters only where it decides: an alias starting with "!" runs a shell
// command, a remote url of the ext:: or fd:: transport runs one too. An
// empty value for those counts as code: the caller may not know it.
func ExecutableGitKey(key, value string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	v := strings.TrimSpace(value)
	switch k {
	case "core.fsmonitor", "core.hookspath", "core.pager", "core.sshcommand", "core.editor",
		"core.askpass", "core.gitproxy", "core.worktree", "core.attributesfile", "core.excludesfile",
		"core.alternaterefscommand",
		"credential.helper", "include.path", "sequence.editor", "diff.external", "diff.tool", "diff.guitool",
		"merge.tool", "merge.guitool", "web.browser", "help.browser", "interactive.difffilter",
		"uploadpack.packobjectshook", "ssh.variant", "http.proxy", "https.proxy", "protocol.allow", "safe.directory",
		"init.templatedir", "status.showuntrackedfiles", "push.recursesubmodules", "submodule.recurse",
		"fetch.recursesubmodules":
		return true
	}
	section, rest, _ := strings.Cut(k, ".")
	switch section {
	case "includeif", "filter", "pager", "credential", "difftool", "mergetool", "gpg", "protocol",
		"hook", "sendemail", "browser", "man", "guitool", "instaweb", "trailer":
		// Whole sections whose keys name programs or choose which run.
		return true
	case "alias":
		return v == "" || strings.HasPrefix(v, "!")
	}
	switch {
	case section == "diff" && (strings.HasSuffix(rest, ".textconv") || strings.HasSuffix(rest, ".command")),
		section == "merge" && strings.HasSuffix(rest, ".driver"),
		section == "remote" && (strings.HasSuffix(rest, ".uploadpack") || strings.HasSuffix(rest, ".receivepack") ||
			strings.HasSuffix(rest, ".proxy") || strings.HasSuffix(rest, ".vcs")),
		section == "remote" && (strings.HasSuffix(rest, ".url") || strings.HasSuffix(rest, ".pushurl")) && gitCommandURL(v),
		section == "submodule" && (strings.HasSuffix(rest, ".update") || strings.HasSuffix(rest, ".url") && gitCommandURL(v)),
		section == "url" && (strings.HasSuffix(rest, ".insteadof") || strings.HasSuffix(rest, ".pushinsteadof")),
		section == "http" && strings.HasSuffix(rest, ".proxy"):
		return true
	}
	return false
}

// gitCommandURL reports whether a remote url runs a command when git uses
// it (the ext:: and fd:: transports), or is unknown (empty).
func gitCommandURL(v string) bool {
	l := strings.ToLower(v)
	return v == "" || strings.HasPrefix(l, "ext::") || strings.HasPrefix(l, "fd::")
}
