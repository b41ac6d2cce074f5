package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/reinhq/rein/tool"
)

// GlobArgs are glob's arguments.
type GlobArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"` // base directory; "" means the work dir
}

// Check validates the pattern's form.
func (a *GlobArgs) Check() error {
	if a.Pattern == "" {
		return errors.New(`"pattern" is required, e.g. "**/*.go"`)
	}
	_, err := compileGlob(a.Pattern)
	return err
}

// glob is a compiled pattern: "/"-separated segments, each a path.Match
// pattern or "**", which matches any number of segments (zero included).
type glob struct {
	segs    []string
	dirOnly bool // the pattern ends with "/": it matches directories only
}

// compileGlob checks a pattern relative to a base directory: no leading
// "/", "~" or NUL, no ".." segment, every segment well formed.
func compileGlob(p string) (glob, error) {
	switch {
	case strings.HasPrefix(p, "/"):
		return glob{}, fmt.Errorf("pattern %q is absolute; patterns are relative to the working directory (or to \"path\"), e.g. \"**/*.go\"", p)
	case strings.HasPrefix(p, "~"):
		return glob{}, fmt.Errorf("pattern %q starts with ~, the home directory, which is outside the working directory; use a pattern relative to it", p)
	case strings.IndexByte(p, 0) >= 0:
		return glob{}, fmt.Errorf("pattern %q contains a NUL byte; remove it", p)
	}
	g := glob{dirOnly: strings.HasSuffix(p, "/")}
	for s := range strings.SplitSeq(p, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return glob{}, fmt.Errorf("pattern %q contains \"..\"; patterns cannot climb out of the working directory, use one inside it", p)
		case "**":
			if len(g.segs) > 0 && g.segs[len(g.segs)-1] == "**" {
				continue
			}
		default:
			if _, err := path.Match(s, ""); err != nil {
				return glob{}, fmt.Errorf("pattern %q: %q is not a valid pattern (use *, ?, [abc] and **; escape a literal * with \\)", p, s)
			}
		}
		g.segs = append(g.segs, s)
	}
	if len(g.segs) == 0 {
		return glob{}, fmt.Errorf("pattern %q matches nothing; give one such as \"*\" or \"**/*.go\"", p)
	}
	return g, nil
}

// states returns the positions in g.segs reachable after matching names:
// states[len(g.segs)] means names match the whole pattern, any other
// position that more names could still match.
func (g glob) states(names []string) []bool {
	cur := make([]bool, len(g.segs)+1)
	next := make([]bool, len(g.segs)+1)
	cur[0] = true
	g.close(cur)
	for _, name := range names {
		clear(next)
		alive := false
		for i, on := range cur[:len(g.segs)] {
			if !on {
				continue
			}
			if g.segs[i] == "**" {
				next[i], alive = true, true
			} else if ok, _ := path.Match(g.segs[i], name); ok {
				next[i+1], alive = true, true
			}
		}
		if !alive {
			clear(cur)
			return cur
		}
		g.close(next)
		cur, next = next, cur
	}
	return cur
}

// close lets each "**" match zero segments.
func (g glob) close(set []bool) {
	for i, s := range g.segs {
		if set[i] && s == "**" {
			set[i+1] = true
		}
	}
}

func (g glob) match(names []string) bool { return g.states(names)[len(g.segs)] }

// descend reports whether an entry below names could match.
func (g glob) descend(names []string) bool {
	return slices.Contains(g.states(names)[:len(g.segs)], true)
}

// literal returns the leading segments without wildcards.
func (g glob) literal() []string {
	for i, s := range g.segs {
		if s == "**" || strings.ContainsAny(s, `*?[\`) {
			return g.segs[:i]
		}
	}
	return g.segs
}

// Glob returns the glob tool: the paths under a directory that match a
// pattern, sorted.
func Glob(root *os.Root, o Options) tool.Tool {
	w := newWorkdir(root)
	maxResults := o.results(DefaultGlobMax)
	schema := `{"type":"object","properties":{` +
		`"pattern":{"type":"string","minLength":1,"maxLength":1024,"pattern":"^[^/]","description":"Glob relative to path: * and ? within a name, [abc], ** for any number of directories, e.g. **/*.go or docs/*.md"},` +
		`"path":{"type":"string","maxLength":4096,"description":"Directory to search under, relative to the working directory; default the working directory"}},` +
		`"required":["pattern"],"additionalProperties":false}`
	return tool.New(tool.Spec{
		Name: "glob",
		Description: fmt.Sprintf("List the files and directories in the working directory whose paths match a glob pattern, sorted; directories end with /. "+
			"Use it to find files by name before reading them. ** matches any number of directories (\"**/*_test.go\"), * and ? match within one name; a pattern ending in / matches directories only. "+
			"Patterns are relative to \"path\" (default the working directory) and cannot start with / or contain \"..\". "+
			"Returns at most %d paths, with a notice when there are more; .git is skipped unless the pattern names it; symbolic links are listed, not followed. "+
			"It does not read file contents (use grep) and sees nothing outside the working directory.", maxResults),
		Schema: json.RawMessage(schema),
		Effect: tool.ReadOnly,
		Roles:  map[string]tool.Role{"pattern": tool.RoleGlob, "path": tool.RolePath},
	}, func(ctx context.Context, a GlobArgs) (string, error) {
		return runGlob(ctx, w, a, maxResults)
	})
}

func runGlob(ctx context.Context, w workdir, a GlobArgs, maxResults int) (string, error) {
	g, err := compileGlob(a.Pattern)
	if err != nil {
		return "", err
	}
	base, err := w.rel(a.Path)
	if err != nil {
		return "", err
	}
	switch info, err := w.root.Stat(base); {
	case err != nil:
		return "", opErr("list", display(a.Path), err)
	case !info.IsDir():
		return "", fmt.Errorf("path %s is a file, not a directory; give the directory to search under, or read the file with read_file", a.Path)
	}
	lit := path.Join(g.literal()...)
	start := path.Join(base, lit)
	wantGit := strings.Contains(a.Pattern, ".git")
	var found []string
	visits, stopped := 0, false
	err = iofs.WalkDir(w.root.FS(), start, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // an unreadable directory below: skip it
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if visits++; visits > maxVisits {
			stopped = true
			return iofs.SkipAll
		}
		names := splitRel(base, p)
		if d.IsDir() && d.Name() == ".git" && p != start && !wantGit {
			return iofs.SkipDir
		}
		if len(names) > 0 && (d.IsDir() || !g.dirOnly) && g.match(names) {
			if d.IsDir() {
				found = append(found, p+"/")
			} else {
				found = append(found, p)
			}
		}
		if d.IsDir() && !g.descend(names) {
			return iofs.SkipDir
		}
		return nil
	})
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "", err
	case err != nil && errors.Is(err, iofs.ErrNotExist):
		found = nil
	case err != nil:
		return "", opErr("list", path.Join(display(a.Path), lit), err)
	}
	if len(found) == 0 {
		return fmt.Sprintf("no paths match %q under %s", a.Pattern, display(a.Path)), nil
	}
	slices.Sort(found)
	var b strings.Builder
	for _, f := range found[:min(len(found), maxResults)] {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	if len(found) > maxResults {
		fmt.Fprintf(&b, "[first %d of %d paths; narrow the pattern or the path to see the rest]\n", maxResults, len(found))
	}
	if stopped {
		fmt.Fprintf(&b, "[stopped after looking at %d entries; narrow the pattern or the path]\n", maxVisits)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// splitRel returns the segments of p (a root path) below base.
func splitRel(base, p string) []string {
	if base != "." {
		if p == base {
			return nil
		}
		p = strings.TrimPrefix(p, base+"/")
	} else if p == "." {
		return nil
	}
	return strings.Split(p, "/")
}
