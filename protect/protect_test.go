package protect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/protect"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want string // the pattern that matches; "" for none
	}{
		{".git/config", ".git/"},
		{".git", ".git/"},
		{".git/hooks/pre-commit", ".git/"},
		{"sub/.git/hooks/x", ".git/"},
		{"a/b/c/.git/config", ".git/"},
		{".GIT/CONFIG", ".git/"},
		{".Git/Hooks/Post-Checkout", ".git/"},
		{"./.git/../.git/config", ".git/"},
		{"x/../.git/config", ".git/"},
		{".git/./hooks//pre-push", ".git/"},
		{`.git\hooks\pre-commit`, ".git/"},
		{".git./config", ".git/"},       // Windows drops trailing dots
		{".git /config", ".git/"},       // and trailing spaces
		{".g\u200cit/config", ".git/"},  // HFS+ ignores zero-width joiners
		{"\ufeff.git/hooks/x", ".git/"}, // and byte-order marks
		{"/home/u/proj/.git/config", ".git/"},
		{".gitmodules", ".gitmodules"},
		{"vendor/lib/.gitmodules", ".gitmodules"},
		{".gitconfig", ".gitconfig"},
		{".config/git/config", ".config/git/"},
		{".gitattributes", ".gitattributes"},
		{".husky/pre-commit", ".husky/"},
		{".pre-commit-config.yaml", ".pre-commit-config.yaml"},
		{".bashrc", ".bashrc"},
		{"home/.bashrc", ".bashrc"},
		{".BASHRC", ".bashrc"},
		{".zshrc", ".zshrc"},
		{".profile", ".profile"},
		{".bash_profile", ".bash_profile"},
		{".zprofile", ".zprofile"},
		{".config/fish/config.fish", ".config/fish/"},
		{".envrc", ".envrc"},
		{".vimrc", ".vimrc"},
		{"sub/.pdbrc", ".pdbrc"},
		{"mise.toml", "mise.toml"},
		{".mise.toml", ".mise.toml"},
		{".vscode/settings.json", ".vscode/"},
		{".vscode/tasks.json", ".vscode/"},
		{".vscode", ".vscode/"},
		{"proj.code-workspace", "*.code-workspace"},
		{".idea/workspace.xml", ".idea/"},
		{".devcontainer/devcontainer.json", ".devcontainer/"},
		{".mcp.json", ".mcp.json"},
		{".claude/settings.json", ".claude/"},
		{".cursor/mcp.json", ".cursor/"},
		{".rein/config.toml", ".rein/"},
		{".rein", ".rein/"},
		{".config/rein/config.toml", ".config/rein/"},
		{".ripgreprc", ".ripgreprc"},
		{".npmrc", ".npmrc"},
		{".cargo/config.toml", ".cargo/config.toml"},
		{".ssh/authorized_keys", ".ssh/"},

		{"README.md", ""},
		{"src/gitconfig.go", ""},
		{"docs/.bashrc.md", ""},
		{"docs/bashrc", ""},
		{".gitignore", ""},
		{"git/config", ""},
		{".github/workflows/ci.yml", ""},
		{"my.git/config", ""},
		{".gitx/config", ""},
		{"src/.vscodex/settings.json", ""},
		{".config/other/x", ""},
		{".cargo/registry/cache", ""},
		{"notes/.rein.md", ""},
		{"", ""},
		{".", ""},
		{"/", ""},
		{"..", ""},
	}
	l := protect.Default()
	for _, tt := range tests {
		r, ok := l.Match(tt.path)
		if got := map[bool]string{true: r.Pattern}[ok]; got != tt.want {
			t.Errorf("Match(%q) = %q, %v; want %q", tt.path, r.Pattern, ok, tt.want)
		}
		if ok && r.Why == "" {
			t.Errorf("Match(%q): rule %q says nothing of why", tt.path, r.Pattern)
		}
	}
}

// The zero List, a nil *List and a list with rules added all keep every
// built-in rule: no way of making a List protects less.
func TestListNeverShrinks(t *testing.T) {
	t.Parallel()
	var zero protect.List
	var nilList *protect.List
	lists := map[string]*protect.List{
		"zero": &zero, "nil": nilList, "default": protect.Default(),
		"with":     protect.Default().With(protect.Rule{Pattern: "deploy/", Why: "CI runs it"}),
		"nil.With": nilList.With(),
	}
	for name, l := range lists {
		for _, r := range protect.Builtin() {
			p := strings.TrimSuffix(r.Pattern, "/")
			p = strings.ReplaceAll(p, "*", "x")
			if _, ok := l.Match(p); !ok {
				t.Errorf("%s: %q is not protected", name, p)
			}
		}
	}
	ext := protect.Default().With(protect.Rule{Pattern: "deploy/", Why: "CI runs it"}, protect.Rule{Pattern: "*.service", Why: "systemd runs it"})
	for _, p := range []string{"deploy/run.sh", "etc/app.service"} {
		if r, ok := ext.Match(p); !ok || r.Why == "" {
			t.Errorf("extended list: Match(%q) = %+v, %v", p, r, ok)
		}
		if _, ok := protect.Default().Match(p); ok {
			t.Errorf("With changed the list it was called on: %q matches the default", p)
		}
	}
	if n := len(ext.Rules()); n != len(protect.Builtin())+2 {
		t.Errorf("Rules: %d rules, want %d", n, len(protect.Builtin())+2)
	}
}

func TestBuiltinPatternsAreValid(t *testing.T) {
	t.Parallel()
	for _, r := range protect.Builtin() {
		if err := protect.Valid(r); err != nil {
			t.Error(err)
		}
		if r.Why == "" {
			t.Errorf("%q: no reason", r.Pattern)
		}
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", " ", "/", "/etc/passwd", "~/.bashrc", "a/../b", "./x", "a//b", `a\b`, "[", "x\x00"} {
		if err := protect.Valid(protect.Rule{Pattern: p}); !errors.Is(err, protect.ErrBadRule) {
			t.Errorf("Valid(%q) = %v, want ErrBadRule", p, err)
		}
	}
	for _, p := range []string{"deploy/", ".terraformrc", "*.service", "scripts/release.sh", ".config/nvim/"} {
		if err := protect.Valid(protect.Rule{Pattern: p}); err != nil {
			t.Errorf("Valid(%q) = %v", p, err)
		}
	}
}

func TestExecutableGitKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key, value string
		want       bool
	}{
		{"core.fsmonitor", "touch /tmp/x", true},
		{"CORE.FSMONITOR", "x", true},
		{"core.fsMonitor", "x", true},
		{"core.hooksPath", "/tmp/hooks", true},
		{"core.pager", "sh -c x", true},
		{"core.sshCommand", "x", true},
		{"core.editor", "x", true},
		{"core.askPass", "x", true},
		{"core.gitProxy", "x", true},
		{"core.alternateRefsCommand", "x", true},
		{"sequence.editor", "x", true},
		{"alias.st", "!sh -c x", true},
		{"alias.st", "  !x", true},
		{"alias.st", "", true},
		{"filter.lfs.clean", "x", true},
		{"filter.x.process", "x", true},
		{"diff.pdf.textconv", "x", true},
		{"diff.x.command", "x", true},
		{"diff.external", "x", true},
		{"merge.ours.driver", "x", true},
		{"credential.helper", "x", true},
		{"credential.https://example.com.helper", "x", true},
		{"include.path", "/tmp/evil", true},
		{"includeIf.gitdir:~/.path", "x", true},
		{"pager.log", "x", true},
		{"pager.diff", "x", true},
		{"gpg.program", "x", true},
		{"gpg.ssh.program", "x", true},
		{"hook.pre-commit.command", "x", true},
		{"sendemail.sendmailcmd", "x", true},
		{"sendemail.toCmd", "x", true},
		{"browser.x.cmd", "x", true},
		{"man.viewer", "x", true},
		{"trailer.sign.command", "x", true},
		{"interactive.diffFilter", "x", true},
		{"uploadpack.packObjectsHook", "x", true},
		{"remote.origin.uploadpack", "x", true},
		{"remote.origin.receivepack", "x", true},
		{"remote.up.vcs", "x", true},
		{"remote.origin.url", "ext::sh -c x", true},
		{"remote.origin.url", "", true},
		{"submodule.x.update", "!x", true},
		{"url.ext::sh.insteadOf", "https://", true},
		{"difftool.x.cmd", "x", true},
		{"mergetool.x.cmd", "x", true},
		{"protocol.ext.allow", "always", true},
		{"init.templateDir", "/tmp/t", true},
		{"core.worktree", "/", true},

		{"user.name", "x", false},
		{"user.email", "x@example.com", false},
		{"alias.st", "status", false},
		{"remote.origin.url", "https://example.com/repo.git", false},
		{"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*", false},
		{"core.autocrlf", "true", false},
		{"core.quotepath", "off", false},
		{"color.ui", "auto", false},
		{"pull.rebase", "true", false},
		{"diff.renames", "true", false},
		{"merge.conflictstyle", "diff3", false},
		{"branch.main.remote", "origin", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := protect.ExecutableGitKey(tt.key, tt.value); got != tt.want {
			t.Errorf("ExecutableGitKey(%q, %q) = %v, want %v", tt.key, tt.value, got, tt.want)
		}
	}
}
