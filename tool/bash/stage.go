package bash

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/sandbox"
)

// Staging is what run_bash does with the writes of a command an executor
// staged (sandbox.Landlock.Stage: the command wrote into an overlay, and
// its writes reach the work dir only when applied). After the command
// ends, run_bash judges what it created, changed and deleted:
//
//   - writes to protected paths (package protect, and the parts of a .git
//     directory that make git run code) are refused, whatever the shell
//     gate thought of the command; a repository the command made itself
//     (git init) may hold what git init writes;
//   - more than AskAbove files changed or deleted, a mass delete (more than
//     MassDelete files) or any deletion under a .git directory asks first;
//     where nobody can be asked (NeverAsk, no Ask) they are not applied;
//   - the rest is applied, each path saved first with Snapshot (the
//     rollback store), so `rein rollback` undoes it like a file tool's
//     write, and recorded with Settle afterwards.
//
// The model and the trace get one line: what was applied, refused or
// dropped ("3 files changed, 34 deleted, including .git/").
type Staging struct {
	// Snapshot saves rel (relative to the work dir) before a staged write
	// changes it; nil keeps no copy. An error applies nothing.
	Snapshot func(rel string) error
	// Settle records what the applied writes left at the paths saved.
	Settle func(rels ...string) error
	// AskAbove is how many files one command may change or delete
	// (created ones do not count) before rein asks; 0 means
	// DefaultAskAbove, a negative value never (mass deletes and deletions
	// under .git/ still ask).
	AskAbove int
	// Ask puts a yes/no question to the user; nil means nobody can be
	// asked.
	Ask func(ctx context.Context, question string) (bool, error)
	// NeverAsk refuses what would ask: bypass and unattended runs.
	NeverAsk bool
}

// Thresholds of Staging.
const (
	DefaultAskAbove = 20
	MassDelete      = 100
)

// settle judges and applies st, and returns the line for the model.
func (r *runner) settle(ctx context.Context, st *sandbox.Staged) (string, error) {
	if st.Empty() {
		_ = st.Discard()
		return "", nil
	}
	s := r.staging
	var refused []string
	refuse := map[string]bool{}
	fresh := freshGitDirs(st)
	for _, c := range st.Changes {
		if r.protectedStaged(c, fresh, st.Upper()) {
			refused = append(refused, filepath.ToSlash(c.Path))
			refuse[c.Path] = true
		}
	}
	keep := func(c sandbox.Change) bool { return !refuse[c.Path] }
	var created, modified, deleted int
	var gitDel, gitAny bool
	for _, c := range st.Changes {
		if refuse[c.Path] {
			continue
		}
		inGit := gitElem(c.Path) >= 0
		gitAny = gitAny || inGit
		if c.Type == fs.ModeDir {
			continue
		}
		switch c.Kind {
		case sandbox.Created:
			created++
		case sandbox.Modified:
			modified++
		case sandbox.Deleted:
			deleted++
			gitDel = gitDel || inGit
		}
	}
	summary := summarize(created, modified, deleted, gitAny)
	var notes []string
	if len(refused) > 0 {
		notes = append(notes, fmt.Sprintf("refused, as protected paths: %s", listSome(refused, 10)))
	}
	if len(st.Skipped) > 0 {
		notes = append(notes, fmt.Sprintf("not applied, neither files, links nor directories: %s", listSome(slicesToSlash(st.Skipped), 10)))
	}
	above := s.AskAbove
	if above == 0 {
		above = DefaultAskAbove
	}
	var why string
	switch {
	case gitDel:
		why = "it deletes files under .git/"
	case deleted > MassDelete:
		why = fmt.Sprintf("it deletes more than %d files", MassDelete)
	case above > 0 && modified+deleted > above:
		why = fmt.Sprintf("it changes or deletes more than %d files", above)
	}
	if why != "" && created+modified+deleted > 0 {
		ok := false
		if !s.NeverAsk && s.Ask != nil {
			var err error
			ok, err = s.Ask(ctx, fmt.Sprintf("The command's writes are staged: %s. Apply them (%s)?", summary, why))
			if err != nil {
				_ = st.Discard()
				return "", fmt.Errorf("asking whether to apply the command's writes: %w", err)
			}
			if !ok {
				_ = st.Discard()
				return note(append([]string{fmt.Sprintf("the command's writes were NOT applied (%s; %s): the user said no; the work dir is as before the command", summary, why)}, notes...)), nil
			}
		}
		if !ok {
			_ = st.Discard()
			return note(append([]string{fmt.Sprintf("the command's writes were NOT applied (%s): %s, which needs a yes this run cannot give; the work dir is as before the command", summary, why)}, notes...)), nil
		}
	}
	var before func(string) error
	if s.Snapshot != nil {
		before = s.Snapshot
	}
	done, err := st.Apply(keep, before)
	var saved []string
	for _, c := range done {
		if c.Type != fs.ModeDir {
			saved = append(saved, c.Path)
		}
	}
	if s.Settle != nil && s.Snapshot != nil && len(saved) > 0 {
		_ = s.Settle(saved...) // unrecorded: a rollback treats the path as changed
	}
	if err != nil {
		if len(done) == 0 {
			return note(append([]string{fmt.Sprintf("the command's writes were NOT applied (%s): %v", summary, err)}, notes...)), nil
		}
		return note(append([]string{fmt.Sprintf("the command's writes were applied only in part (%d of %s): %v", len(done), summary, err)}, notes...)), nil
	}
	if created+modified+deleted == 0 && len(notes) == 0 {
		return "", nil
	}
	if created+modified+deleted == 0 {
		return note(notes), nil
	}
	return note(append([]string{"applied the command's writes: " + summary}, notes...)), nil
}

func note(parts []string) string {
	return "\n[rein: " + strings.Join(parts, "; ") + "]"
}

// summarize says "3 files created, 2 changed, 34 deleted, including .git/".
func summarize(created, modified, deleted int, git bool) string {
	var parts []string
	plural := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	plural(created, "created")
	plural(modified, "changed")
	plural(deleted, "deleted")
	if len(parts) == 0 {
		parts = []string{"only directories changed"}
	} else {
		word := "files"
		if strings.HasPrefix(parts[0], "1 ") {
			word = "file"
		}
		parts[0] = strings.Replace(parts[0], " ", " "+word+" ", 1)
	}
	s := strings.Join(parts, ", ")
	if git {
		s += ", including .git/"
	}
	return s
}

func listSome(ps []string, n int) string {
	slices.Sort(ps)
	if len(ps) <= n {
		return strings.Join(ps, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ps[:n], ", "), len(ps)-n)
}

func slicesToSlash(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = filepath.ToSlash(p)
	}
	return out
}

// gitElem returns the index of the first ".git" element of rel, or -1.
func gitElem(rel string) int {
	for i, e := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(e, ".git") {
			return i
		}
	}
	return -1
}

// freshGitDirs are the .git directories the command created.
func freshGitDirs(st *sandbox.Staged) map[string]bool {
	fresh := map[string]bool{}
	for _, c := range st.Changes {
		if c.Kind == sandbox.Created && c.Type == fs.ModeDir && strings.EqualFold(filepath.Base(c.Path), ".git") {
			fresh[filepath.ToSlash(c.Path)] = true
		}
	}
	return fresh
}

// protectedStaged reports whether c touches a protected path. A .git that
// is a link or a file is one. Inside a
// .git directory only the parts that make git run code count (hooks,
// config, info, modules: gitCode, as the watch and the sandbox's masks
// have it), unless the command made the repository itself and left in
// them only what git init writes; the rest (objects, refs, the index) is
// git's own work, which commits change. Elsewhere the protect list decides.
func (r *runner) protectedStaged(c sandbox.Change, fresh map[string]bool, upper string) bool {
	rel := filepath.ToSlash(c.Path)
	i := gitElem(rel)
	if i < 0 {
		_, ok := r.watch.list.Match(c.Path)
		return ok
	}
	elems := strings.Split(rel, "/")
	if i+1 >= len(elems) {
		// .git itself: a directory (a repository made, its mode changed)
		// is git's; a link or a file there points git at a directory of
		// someone's choosing, whose config runs code (the watch put such
		// a swap back; staged, it is refused). A deletion asks, as every
		// deletion under .git/ does.
		return c.Kind != sandbox.Deleted && c.Type != fs.ModeDir
	}
	if !slices.Contains(gitCode, elems[i+1]) {
		return false
	}
	repo := strings.Join(elems[:i+1], "/")
	if fresh[repo] && c.Kind == sandbox.Created {
		return !harmlessIn(upper, repo, rel)
	}
	return true
}
