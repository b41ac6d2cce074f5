package scope

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/protect"
)

// maxGitFile is how much of a ".git" file (a "gitdir: <path>" pointer, as
// in worktrees and submodules) Protected reads.
const maxGitFile = 4096

// Protected reports whether p, a path CheckPath allows, names a protected
// path, by which rule, and, when it is only so once resolved, where it
// leads (for the reason shown to the human). It matches p as written and as
// resolved (every symbolic link followed, ".." applied as the kernel
// would), the resolved path in full, so a work dir that is itself inside a
// protected directory is protected too; and it counts a path inside the
// directory a ".git" link or "gitdir:" file points to as one inside .git.
// A path CheckPath refuses is reported unprotected: refuse it first.
func (g *Gate) Protected(p string) (r protect.Rule, where string, ok bool) {
	rel := p
	if filepath.IsAbs(p) {
		if rel, ok = g.under(filepath.Clean(p)); !ok {
			return protect.Rule{}, "", false
		}
	}
	if r, ok := g.protected.Match(rel); ok {
		return r, "", true
	}
	cur, err := g.checkPath(p)
	if err != nil {
		return protect.Rule{}, "", false
	}
	shown := g.relative(cur)
	if r, ok := g.protected.Match(cur); ok {
		return r, "it resolves to " + shown, true
	}
	if dotgit, ok := g.inGitDir(cur); ok {
		r, _ := g.protected.Match(".git/")
		return r, "it resolves to " + shown + ", inside the git directory " + g.relative(dotgit) + " points to", true
	}
	return protect.Rule{}, "", false
}

// relative returns cur, absolute and within the work dir, relative to it.
func (g *Gate) relative(cur string) string {
	if cur == g.real {
		return "."
	}
	if rest, ok := strings.CutPrefix(cur, g.real+"/"); ok {
		return rest
	}
	if g.real == "/" {
		return cur[1:]
	}
	return cur
}

// inGitDir reports whether cur lies in the git directory that a ".git"
// symbolic link or "gitdir:" file points to, in the work dir or in one of
// the directories between it and cur, and which .git that is. (A pointer
// elsewhere in the tree is not looked for: that would take a walk of the
// whole tree on every write.)
func (g *Gate) inGitDir(cur string) (string, bool) {
	if dotgit := filepath.Join(g.real, ".git"); cur != dotgit {
		if target, ok := gitDirTarget(dotgit); ok && (cur == target || strings.HasPrefix(cur, target+"/")) {
			return dotgit, true
		}
	}
	for d := filepath.Dir(cur); g.within(d); d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if target, ok := gitDirTarget(dotgit); ok && (cur == target || strings.HasPrefix(cur, target+"/")) {
			return dotgit, true
		}
		if d == g.real || d == "/" {
			break
		}
	}
	return "", false
}

// gitDirTarget returns where dotgit points, resolved, when it is a
// symbolic link or a "gitdir:" file; ok is false for a directory, nothing,
// or a file that cannot be read.
func gitDirTarget(dotgit string) (string, bool) {
	info, err := os.Lstat(dotgit)
	if err != nil {
		return "", false
	}
	var target string
	switch {
	case info.Mode()&os.ModeSymlink != 0:
		t, err := filepath.EvalSymlinks(dotgit)
		if err != nil {
			return "", false
		}
		return t, true
	case info.Mode().IsRegular():
		f, err := os.Open(dotgit)
		if err != nil {
			return "", false
		}
		defer f.Close()
		line, _ := bufio.NewReader(io.LimitReader(f, maxGitFile)).ReadString('\n')
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return "", false
		}
		target = strings.TrimSpace(rest)
		if target == "" {
			return "", false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(dotgit), target)
		}
	default:
		return "", false
	}
	if t, err := filepath.EvalSymlinks(target); err == nil {
		return t, true
	}
	return filepath.Clean(target), true
}
