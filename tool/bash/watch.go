package bash

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/protect"
)

// A shell command never changes a protected path (package protect: git
// hooks and config, shell rc files, editor and agent settings: code that
// runs later, outside the sandbox). The shell gate asks about every such
// write it can see; the landlock and docker sandboxes mount the protected
// paths that exist read-only. What neither sees — a script run by name
// under --sandbox none, an archive's members, a protected file that did
// not exist yet — the watch undoes: it fingerprints the protected paths of
// the work dir before each command and puts back what the command
// created, changed or deleted among them, keeping a copy of what it left.
// The file tools, which ask, are the way to change them.

// Bounds of one fingerprint.
const (
	watchWalkMax   = 50000    // entries of the work dir looked at
	watchFileMax   = 1 << 20  // a protected file's content kept, to restore it
	watchTotalMax  = 16 << 20 // all content kept
	quarantineMode = 0o700
)

// gitCode are the parts of a .git directory whose content makes git run
// code later (as the sandbox's masks have them); the rest (objects, refs,
// the index) is git's own work, which commits change.
var gitCode = []string{"config", "hooks", "info", "modules", "commondir", "config.worktree"}

// watch undoes shell commands' changes to protected paths.
type watch struct {
	root       string // the work dir, absolute
	list       *protect.List
	quarantine string // where what a command left goes; "" for a temp dir
}

// node is what a protected path was: its type and mode, and its content
// (or, past the bounds, only its hash) or link target.
type node struct {
	mode fs.FileMode
	data []byte
	sum  [32]byte
	kept bool // data holds the whole content
	link string
}

func (n node) same(m node) bool {
	return n.mode == m.mode && n.sum == m.sum && n.link == m.link
}

// snapshot fingerprints the protected paths under the work dir.
func (w *watch) snapshot() map[string]node {
	out := map[string]node{}
	seen, budget := 0, watchTotalMax
	_ = filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == w.root {
			return nil
		}
		if seen++; seen > watchWalkMax {
			return filepath.SkipAll
		}
		rel, err := filepath.Rel(w.root, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		watched, descend := w.watched(rel, d.IsDir())
		if !watched {
			if d.IsDir() && !descend {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		n := node{mode: fi.Mode()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			n.link, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			if fi.Size() <= watchFileMax && int(fi.Size()) <= budget {
				if b, err := os.ReadFile(p); err == nil {
					n.data, n.kept, n.sum = b, true, sha256.Sum256(b)
					budget -= len(b)
				}
			} else if f, err := os.Open(p); err == nil {
				h := sha256.New()
				_, _ = copyN(h, f)
				f.Close()
				copy(n.sum[:], h.Sum(nil))
			}
		}
		out[rel] = n
		return nil
	})
	return out
}

// watched reports whether rel is a protected path the watch keeps, and,
// for a directory that is not, whether something below it may be.
func (w *watch) watched(rel string, dir bool) (watched, descend bool) {
	elems := strings.Split(rel, "/")
	for i, e := range elems {
		if !strings.EqualFold(e, ".git") {
			continue
		}
		if i == len(elems)-1 {
			return dir, true // .git itself (swapped for a link, it is put back); look inside for its code parts
		}
		// In a repository, only the parts that run code are watched.
		if slices.ContainsFunc(gitCode, func(g string) bool { return strings.EqualFold(g, elems[i+1]) }) {
			return true, true
		}
		return false, false
	}
	if _, ok := w.list.Match(rel); ok {
		return true, true
	}
	return false, true
}

// undo compares the protected paths now with before and puts back what
// changed, through os.Root so that a link the command planted cannot lead
// a removal or a restore outside the work dir. It returns a note for the
// model, "" when nothing changed.
func (w *watch) undo(before map[string]node) string {
	after := w.snapshot()
	var created, changed, deleted []string
	for rel, n := range after {
		b, ok := before[rel]
		switch {
		case !ok:
			created = append(created, rel)
		case !b.same(n):
			changed = append(changed, rel)
		}
	}
	for rel := range before {
		if _, ok := after[rel]; !ok {
			deleted = append(deleted, rel)
		}
	}
	created = w.freshRepos(created, before)
	if len(created)+len(changed)+len(deleted) == 0 {
		return ""
	}
	root, err := os.OpenRoot(w.root)
	if err != nil {
		return fmt.Sprintf("\n[rein: this command changed protected paths (%s) and rein could not undo it: %v]", strings.Join(slices.Sorted(slices.Values(append(append(created, changed...), deleted...))), ", "), err)
	}
	defer root.Close()
	q := w.quarantineDir()
	var lines, failed []string
	why := func(rel string) string {
		if r, ok := w.list.Match(rel); ok {
			return r.Why
		}
		return "git runs its hooks and config keys on the user's next git command"
	}
	// Created: deepest first, so a directory is empty of what we watch.
	slices.SortFunc(created, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, rel := range created {
		keep(root, q, rel)
		if err := root.RemoveAll(filepath.FromSlash(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			failed = append(failed, rel)
			continue
		}
		lines = append(lines, "removed "+rel+" (created): "+why(rel))
	}
	// Changed and deleted: shallowest first, so directories exist again
	// before their files.
	restore := append(changed, deleted...)
	slices.SortFunc(restore, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	for _, rel := range restore {
		b := before[rel]
		if _, gone := after[rel]; !gone {
			keep(root, q, rel)
		}
		if err := put(root, rel, b); err != nil {
			failed = append(failed, rel)
			continue
		}
		verb := "restored"
		if _, gone := after[rel]; !gone {
			verb = "restored (deleted)"
		}
		lines = append(lines, verb+" "+rel+": "+why(rel))
	}
	var sb strings.Builder
	sb.WriteString("\n[rein: a shell command may not change protected paths; rein undid this command's changes to them:\n")
	for _, l := range lines {
		sb.WriteString("  " + l + "\n")
	}
	for _, f := range failed {
		sb.WriteString("  could not undo " + f + "\n")
	}
	if q != "" {
		sb.WriteString("  what the command left is kept in " + q + "\n")
	}
	sb.WriteString("  To change a protected file, use write_file or edit_file, which ask the user.]")
	return sb.String()
}

// put makes rel what n says it was.
func put(root *os.Root, rel string, n node) error {
	p := filepath.FromSlash(rel)
	if fi, err := root.Lstat(p); err == nil {
		if n.mode.IsDir() && fi.IsDir() {
			return root.Chmod(p, n.mode.Perm())
		}
		if err := root.RemoveAll(p); err != nil {
			return err
		}
	}
	if dir := filepath.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	switch {
	case n.mode.IsDir():
		if err := root.Mkdir(p, n.mode.Perm()); err != nil {
			return err
		}
		return root.Chmod(p, n.mode.Perm())
	case n.mode&fs.ModeSymlink != 0:
		return root.Symlink(n.link, p)
	case n.mode.IsRegular() && n.kept:
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, n.mode.Perm())
		if err != nil {
			return err
		}
		_, werr := f.Write(n.data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
		return root.Chmod(p, n.mode.Perm())
	}
	return fmt.Errorf("%s: too large to have been kept", rel)
}

// keep copies what the command left at rel into q (best effort: a copy is
// for the user's eyes, the undo does not depend on it).
func keep(root *os.Root, q, rel string) {
	if q == "" {
		return
	}
	fi, err := root.Lstat(filepath.FromSlash(rel))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > watchFileMax {
		return
	}
	b, err := root.ReadFile(filepath.FromSlash(rel))
	if err != nil {
		return
	}
	dst := filepath.Join(q, filepath.FromSlash(rel))
	if os.MkdirAll(filepath.Dir(dst), quarantineMode) == nil {
		_ = os.WriteFile(dst, b, 0o600)
	}
}

// quarantineDir returns a fresh directory for one command's leftovers.
func (w *watch) quarantineDir() string {
	base, prefix := w.quarantine, ""
	if base == "" {
		base, prefix = os.TempDir(), "rein-undone-"
	}
	if err := os.MkdirAll(base, quarantineMode); err != nil {
		return ""
	}
	d, err := os.MkdirTemp(base, prefix+time.Now().UTC().Format("20060102T150405Z")+"-")
	if err != nil {
		return ""
	}
	return d
}

// copyN feeds dst up to 1 GiB of f.
func copyN(dst interface{ Write([]byte) (int, error) }, f *os.File) (int64, error) {
	var total int64
	buf := make([]byte, 64<<10)
	for total < 1<<30 {
		n, err := f.Read(buf)
		if n > 0 {
			_, _ = dst.Write(buf[:n])
			total += int64(n)
		}
		if err != nil {
			break
		}
	}
	return total, nil
}

// freshRepos keeps, of what a command created, the repositories it made
// (git init, git clone: a .git that did not exist before) as long as they
// hold nothing that runs: hooks only as git's *.sample files, which git
// never runs, and a config without a key that runs code. Anything else in
// a new repository is undone like any protected write.
func (w *watch) freshRepos(created []string, before map[string]node) []string {
	newRepo := func(rel string) (string, bool) {
		elems := strings.Split(rel, "/")
		for i, e := range elems {
			if strings.EqualFold(e, ".git") {
				repo := strings.Join(elems[:i+1], "/")
				_, existed := before[repo+"/config"]
				_, hooks := before[repo+"/hooks"]
				return repo, !existed && !hooks
			}
		}
		return "", false
	}
	var out []string
	for _, rel := range created {
		repo, fresh := newRepo(rel)
		if !fresh || !w.harmless(repo, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// harmless reports whether rel, in the new repository repo, runs nothing.
func (w *watch) harmless(repo, rel string) bool { return harmlessIn(w.root, repo, rel) }

// harmlessIn is harmless, reading rel under base.
func harmlessIn(base, repo, rel string) bool {
	part := strings.TrimPrefix(rel, repo)
	full := filepath.Join(base, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return false
	}
	switch {
	case fi.IsDir():
		return part == "" || part == "/hooks" || part == "/info"
	case strings.HasPrefix(part, "/hooks/"):
		return strings.HasSuffix(part, ".sample") && !strings.Contains(strings.TrimPrefix(part, "/hooks/"), "/")
	case part == "/info/exclude":
		return true
	case part == "/config":
		b, err := os.ReadFile(full)
		return err == nil && !runsCode(string(b))
	}
	return false
}

// runsCode reports whether a git config file sets a key that runs code
// (protect.ExecutableGitKey), or cannot be read as plain sections and keys.
func runsCode(config string) bool {
	section := ""
	for line := range strings.Lines(config) {
		l := strings.TrimSpace(line)
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if l[0] == '[' {
			end := strings.IndexByte(l, ']')
			if end < 0 || strings.TrimSpace(l[end+1:]) != "" {
				return true
			}
			name, sub, ok := strings.Cut(l[1:end], " ")
			section = strings.ToLower(name)
			if ok {
				section += "." + strings.Trim(strings.TrimSpace(sub), `"`)
			}
			continue
		}
		if section == "" || strings.HasSuffix(l, `\`) {
			return true // a key outside a section, or a value continued: not what git init writes
		}
		k, v, _ := strings.Cut(l, "=")
		if protect.ExecutableGitKey(section+"."+strings.TrimSpace(k), strings.TrimSpace(v)) {
			return true
		}
	}
	return false
}
