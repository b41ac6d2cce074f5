// Package protect is the one list of protected paths: files whose content
// runs code, or changes what a tool does or may do, later and outside the
// sandbox (git hooks and config, shell rc files, editor tasks, agent and
// MCP config, rein's own config). Any write to them asks, in every mode,
// and is refused where nobody can answer. The list is built in and may be
// extended by the user's config, never shrunk by a project's.
//
// It is a leaf: the scope gate (file tools), the shell gate (shell writes)
// and config use it, and it imports nothing of rein's.
package protect

import (
	"path"
	"strings"
)

// Rule is one protected pattern: a path relative to a root (the work dir,
// or home for the user's own files), and why a write there matters.
type Rule struct {
	// Pattern is slash-separated. A trailing "/" protects a directory and
	// everything below it; a "*" matches within one path element
	// (path.Match); anything else is an exact path. Matching is
	// case-insensitive, since macOS and Windows file systems are.
	Pattern string
	// Why says what would run, and when: "git runs it on later git
	// commands". It is shown to the person asked.
	Why string
}

// Builtin returns the built-in rules, a fresh copy each call.
func Builtin() []Rule {
	return []Rule{
		{".git/", "git reads it: hooks and config run code on the user's next git command"},
		{".gitmodules", "git reads it on submodule commands: urls and update commands can run code"},
		{".gitconfig", "git reads it: config keys such as core.fsmonitor run code"},
		{".gitattributes", "git applies its filters and diff drivers on later git commands"},
		{".bashrc", "the shell runs it at the user's next login or terminal"},
		{".bash_profile", "the shell runs it at the user's next login"},
		{".bash_login", "the shell runs it at the user's next login"},
		{".bash_logout", "the shell runs it when the user logs out"},
		{".profile", "the shell runs it at the user's next login"},
		{".zshrc", "zsh runs it at the user's next terminal"},
		{".zprofile", "zsh runs it at the user's next login"},
		{".zshenv", "zsh runs it for every zsh started"},
		{".zlogin", "zsh runs it at the user's next login"},
		{".config/fish/", "fish runs it at the user's next terminal"},
		{".envrc", "direnv runs it when the user enters the directory"},
		{".vscode/", "the editor runs its tasks and applies its settings"},
		{".idea/", "the IDE runs its run configurations and applies its settings"},
		{".devcontainer/", "the editor builds and runs the container it describes"},
		{".mcp.json", "MCP clients start the servers it names"},
		{".cursor/", "the editor's agent reads its rules and MCP servers"},
		{".claude/", "Claude Code reads its settings, hooks and MCP servers"},
		{".codex/", "Codex reads its config and MCP servers"},
		{".rein/", "rein reads its config: the next session's rights"},
		{".ripgreprc", "ripgrep reads it through RIPGREP_CONFIG_PATH: options such as --pre run code"},
		{".npmrc", "npm reads it: scripts and registries"},
		{".pypirc", "pip and twine read it"},
		{".ssh/", "ssh reads it: authorized keys, config and ProxyCommand"},
	}
}

// List is a set of rules. The zero List protects nothing; use Default.
type List struct {
	rules []Rule
}

// Default returns the built-in list.
func Default() *List { return &List{rules: Builtin()} }

// With returns a list with extra rules added. Rules are only ever added:
// there is no way to remove a built-in one.
func (l *List) With(extra ...Rule) *List {
	n := &List{rules: append(append([]Rule(nil), l.rules...), extra...)}
	return n
}

// Rules returns the list's rules.
func (l *List) Rules() []Rule { return append([]Rule(nil), l.rules...) }

// Match reports whether rel, a slash- or OS-separated path relative to the
// root it will be written under, is protected, and by which rule. rel is
// cleaned first; a path that climbs out ("../x") is matched on what is left
// after the climb, so callers should resolve paths against the root first.
func (l *List) Match(rel string) (Rule, bool) {
	if l == nil {
		return Rule{}, false
	}
	p := strings.ToLower(path.Clean("/" + strings.ReplaceAll(rel, "\\", "/")))[1:]
	if p == "" {
		return Rule{}, false
	}
	for _, r := range l.rules {
		if matches(strings.ToLower(r.Pattern), p) {
			return r, true
		}
	}
	return Rule{}, false
}

// matches: a dir pattern matches the dir itself, anything below it, and
// the same dir at any depth for .git/ (a nested repository's hooks run
// too); a file pattern matches at any depth, since a rc file or editor
// config anywhere in a tree can be picked up by a tool run there.
func matches(pat, p string) bool {
	elems := strings.Split(p, "/")
	if dir, ok := strings.CutSuffix(pat, "/"); ok {
		dirElems := strings.Split(dir, "/")
		for i := 0; i+len(dirElems) <= len(elems); i++ {
			if elemsMatch(dirElems, elems[i:i+len(dirElems)]) {
				return true
			}
		}
		return false
	}
	patElems := strings.Split(pat, "/")
	for i := 0; i+len(patElems) <= len(elems); i++ {
		if i+len(patElems) == len(elems) && elemsMatch(patElems, elems[i:]) {
			return true
		}
	}
	return false
}

func elemsMatch(pat, got []string) bool {
	for i := range pat {
		if ok, err := path.Match(pat[i], got[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// ExecutableGitKey reports whether setting the git config key to value
// makes git run code (or load config or hooks from elsewhere) later.
// Keys are case-insensitive in their section and name. value matters only
// for alias.* (an alias starting with "!" runs a shell command).
func ExecutableGitKey(key, value string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.fsmonitor", "core.hookspath", "core.pager", "core.sshcommand", "core.editor",
		"core.askpass", "core.gitproxy", "core.worktree", "core.attributesfile", "core.excludesfile",
		"credential.helper", "include.path", "sequence.editor", "gpg.program", "gpg.ssh.program",
		"gpg.x509.program", "pager.log", "diff.external", "merge.tool", "diff.tool", "web.browser",
		"uploadpack.packobjectshook", "ssh.variant", "http.proxy", "remote.origin.receivepack",
		"remote.origin.uploadpack", "protocol.allow", "safe.directory", "init.templatedir",
		"status.showuntrackedfiles", "push.recursesubmodules", "submodule.recurse":
		return true
	}
	switch {
	case strings.HasPrefix(k, "alias."):
		return strings.HasPrefix(strings.TrimSpace(value), "!") || value == ""
	case strings.HasPrefix(k, "includeif."), strings.HasPrefix(k, "filter."),
		strings.HasPrefix(k, "pager."), strings.HasPrefix(k, "credential."),
		strings.HasPrefix(k, "difftool."), strings.HasPrefix(k, "mergetool."),
		strings.HasPrefix(k, "gpg."), strings.HasPrefix(k, "protocol."):
		return true
	case strings.HasPrefix(k, "diff.") && (strings.HasSuffix(k, ".textconv") || strings.HasSuffix(k, ".command")),
		strings.HasPrefix(k, "merge.") && strings.HasSuffix(k, ".driver"),
		strings.HasPrefix(k, "remote.") && (strings.HasSuffix(k, ".uploadpack") || strings.HasSuffix(k, ".receivepack") || strings.HasSuffix(k, ".proxy")),
		strings.HasPrefix(k, "submodule.") && strings.HasSuffix(k, ".update"),
		strings.HasPrefix(k, "url.") && (strings.HasSuffix(k, ".insteadof") || strings.HasSuffix(k, ".pushinsteadof")),
		strings.HasPrefix(k, "http.") && strings.HasSuffix(k, ".proxy"):
		return true
	}
	return false
}
