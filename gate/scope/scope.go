// Package scope holds the scope gate: it refuses a tool call whose path,
// directory or glob arguments lead outside the session's working directory.
//
// It judges every top-level argument a tool marks with tool.RolePath,
// tool.RoleDir or tool.RoleGlob. A path is refused when it holds a NUL byte,
// starts with "~" (a model means the home directory by it), is absolute and
// not inside the working directory, climbs out with ".." (also written with
// backslashes, as a model used to Windows might), or runs through a symbolic
// link that lands outside: the existing part of the path is resolved
// component by component and compared with the working directory's real
// path (the working directory itself may be reached through a link). A glob
// is refused when it is absolute, starts with "~" or has a ".." segment, and
// its leading wildcard-free part is judged as a path.
//
// A call of a tool that changes things (its Effect is not tool.ReadOnly)
// whose path, directory or glob argument lands on a protected path (package
// protect: git hooks and config, shell rc files, editor, agent and rein
// config) gets an Ask, in every permission mode: those files run code
// later, outside the sandbox. The path is judged as written and as
// resolved (through every symbolic link and ".."), and a write into the
// directory a .git link or "gitdir:" file points to counts as a write to
// .git. Read-only tools are not affected.
//
// This gate is the early, friendly refusal, with a hint the model can act
// on. It is not the enforcement: the file system can change between this
// check and the tool's use of the path, so the file tools open everything
// through os.Root, which cannot be led out. Paths that look like credentials
// are not this gate's business: inside the working directory is the user's
// project, and all of it is in scope.
package scope

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/protect"
	"github.com/reinhq/rein/tool"
)

// Name is the gate's name in verdicts.
const Name = "scope"

// Errors of CheckPath and CheckGlob.
var (
	// ErrOutside marks a path that leads outside the working directory.
	ErrOutside = errors.New("outside the working directory")
	// ErrUnchecked marks a path that could not be judged (a NUL byte, a
	// loop of symbolic links, a directory it may not look into); it is
	// refused like an outside one.
	ErrUnchecked = errors.New("cannot be checked")
)

// maxHintPath is how much of a refused path the hint repeats.
const maxHintPath = 200

// maxLinks is how many symbolic links one path may run through, as on Linux.
const maxLinks = 40

// Gate is the scope gate for one working directory. It is safe for
// concurrent use and changes nothing.
type Gate struct {
	abs       string        // the working directory, absolute and clean
	real      string        // abs with every symbolic link resolved
	protected *protect.List // nil: the built-in list
}

var _ gate.Gate = (*Gate)(nil)

// NewGate returns the scope gate for workdir, which must be an existing
// directory.
func NewGate(workdir string) (*Gate, error) {
	abs, err := filepath.Abs(workdir)
	if err != nil {
		return nil, fmt.Errorf("scope gate: working directory %s: %w", workdir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("scope gate: working directory %s: %w", workdir, err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("scope gate: working directory %s: %w", workdir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("scope gate: working directory %s is not a directory", workdir)
	}
	return &Gate{abs: abs, real: real}, nil
}

// WithProtected sets the protected paths writes ask about: l, which always
// holds the built-in rules (protect.List cannot lose them); nil means the
// built-in list. It returns g. Call it before the first Check.
func (g *Gate) WithProtected(l *protect.List) *Gate {
	g.protected = l
	return g
}

// Name returns "scope".
func (*Gate) Name() string { return Name }

// Check judges every path, directory and glob argument of the call.
func (g *Gate) Check(ctx context.Context, c *gate.Call) gate.Verdict {
	if c.Tool == nil {
		v := gate.UnknownTool(c.Name)
		v.Gate = Name
		return v
	}
	// The arguments to judge (c.Paths), in name order so that the first
	// refusal is always the same one.
	writes := c.Effect(ctx) != tool.ReadOnly // this call's class (tool.Effector)
	var ask gate.Verdict
	asked := false
	for _, p := range c.Paths() {
		arg, val, role := p.Name, p.Value, p.Role
		if !p.String {
			if v, _ := c.Value(); v.(map[string]any)[arg] != nil {
				return gate.Verdict{Decision: gate.Deny, Gate: Name,
					Reason: fmt.Sprintf("%s argument %q is not a string, so it cannot be checked", c.Name, arg),
					Hint:   fmt.Sprintf("The argument %q must be a string: a path relative to the working directory.", arg)}
			}
			continue // null: as if absent
		}
		var err error
		target := val
		if role == tool.RoleGlob {
			target, err = g.checkGlob(val)
		} else {
			err = g.CheckPath(val)
		}
		if err != nil {
			return deny(c.Name, arg, val, role, err)
		}
		if writes && !asked {
			if r, where, ok := g.Protected(target); ok {
				ask, asked = protectedAsk(c.Name, arg, val, where, role, r), true
			}
		}
	}
	if asked {
		return ask
	}
	return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "every path argument is inside the working directory"}
}

// protectedAsk is the verdict on a write to a protected path.
func protectedAsk(toolName, arg, val, where string, role tool.Role, r protect.Rule) gate.Verdict {
	verb := "write"
	if role == tool.RoleDir {
		verb = "work in" // a command run there writes there
	}
	if len(val) > maxHintPath {
		val = strings.ToValidUTF8(val[:maxHintPath], "") + "…"
	}
	at := ""
	if where != "" {
		at = " (" + where + ")"
	}
	return gate.Verdict{Decision: gate.Ask, Gate: Name,
		Reason: fmt.Sprintf("%s would %s %q%s, a protected path (%s): %s; "+
			"a write there runs code later, outside the sandbox, so it needs a human's yes in every mode",
			toolName, verb, val, at, r.Pattern, r.Why),
		Hint: fmt.Sprintf("The path %q (argument %q) is protected: %s. Writing it needs the user's yes, "+
			"which was not given; do not try it another way. Tell the user what you wanted to change there.", val, arg, r.Why)}
}

func deny(toolName, arg, val string, role tool.Role, err error) gate.Verdict {
	what := "path"
	if role == tool.RoleGlob {
		what = "pattern"
	}
	if len(val) > maxHintPath {
		val = strings.ToValidUTF8(val[:maxHintPath], "") + "…"
	}
	v := gate.Verdict{Decision: gate.Deny, Gate: Name,
		Reason: fmt.Sprintf("%s argument %q: %v", toolName, arg, err),
		Hint: fmt.Sprintf("The %s %q is outside the working directory, which is all this session may touch. "+
			"Use a %s relative to the working directory.", what, val, what)}
	if errors.Is(err, ErrUnchecked) {
		v.Hint = fmt.Sprintf("The %s %q could not be checked, so it was refused. "+
			"Use a plain %s relative to the working directory.", what, val, what)
	}
	return v
}

// scopeError is an error for the audit log that unwraps to a sentinel.
type scopeError struct {
	kind error
	msg  string
}

func (e *scopeError) Error() string { return e.msg }
func (e *scopeError) Unwrap() error { return e.kind }

func outside(format string, args ...any) error {
	return &scopeError{kind: ErrOutside, msg: fmt.Sprintf(format, args...)}
}

func unchecked(format string, args ...any) error {
	return &scopeError{kind: ErrUnchecked, msg: fmt.Sprintf(format, args...)}
}

// CheckPath returns nil when p, relative to the working directory or
// absolute, stays inside it, else an error wrapping ErrOutside or
// ErrUnchecked. "" means the working directory. It looks at the file system
// (Lstat and Readlink) but changes nothing.
func (g *Gate) CheckPath(p string) error {
	_, err := g.checkPath(p)
	return err
}

// checkPath is CheckPath, also returning the path as resolved: absolute,
// every existing symbolic link followed.
func (g *Gate) checkPath(p string) (string, error) {
	switch {
	case p == "":
		return g.real, nil
	case strings.IndexByte(p, 0) >= 0:
		return "", unchecked("path %q contains a NUL byte", p)
	case p[0] == '~':
		return "", outside("path %q starts with ~, the home directory", p)
	}
	rel := p
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		var ok bool
		if rel, ok = g.under(c); !ok {
			return "", outside("path %q is absolute and not inside the working directory %s", p, g.abs)
		}
	}
	if climbs(rel) {
		return "", outside("path %q climbs out of the working directory with ..", p)
	}
	if strings.IndexByte(rel, '\\') >= 0 && climbs(strings.ReplaceAll(rel, `\`, "/")) {
		return "", outside(`path %q climbs out with ".." when \ is read as a separator`, p)
	}
	return g.resolve(p, filepath.Clean(rel))
}

// CheckGlob returns nil when the glob pattern p stays inside the working
// directory, else an error wrapping ErrOutside or ErrUnchecked.
func (g *Gate) CheckGlob(p string) error {
	_, err := g.checkGlob(p)
	return err
}

// checkGlob is CheckGlob, also returning the pattern's fixed part.
func (g *Gate) checkGlob(p string) (string, error) {
	switch {
	case p == "":
		return "", nil
	case strings.IndexByte(p, 0) >= 0:
		return "", unchecked("pattern %q contains a NUL byte", p)
	case p[0] == '~':
		return "", outside("pattern %q starts with ~, the home directory", p)
	case filepath.IsAbs(p) || p[0] == '\\':
		return "", outside("pattern %q is absolute", p)
	}
	for seg := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return "", outside("pattern %q has a .. segment", p)
		}
	}
	var lit []string
	for seg := range strings.SplitSeq(p, "/") {
		if strings.ContainsAny(seg, `*?[{\`) {
			break
		}
		lit = append(lit, seg)
	}
	fixed := strings.Join(lit, "/")
	if err := g.CheckPath(fixed); err != nil {
		if errors.Is(err, ErrUnchecked) {
			return "", unchecked("pattern %q: its fixed part: %v", p, err)
		}
		return "", outside("pattern %q: its fixed part: %v", p, err)
	}
	return fixed, nil
}

// climbs reports whether the relative path rel leads above its start.
func climbs(rel string) bool {
	c := filepath.Clean(rel)
	return c == ".." || strings.HasPrefix(c, "../")
}

// under returns the clean absolute path c relative to the working
// directory, as given or as resolved, and whether it is inside.
func (g *Gate) under(c string) (string, bool) {
	for _, base := range [2]string{g.abs, g.real} {
		if c == base {
			return ".", true
		}
		if base == "/" {
			return c[1:], true
		}
		if rest, ok := strings.CutPrefix(c, base); ok && rest[0] == '/' {
			return rest[1:], true
		}
	}
	return "", false
}

// within reports whether the absolute, resolved path cur is the working
// directory or below it.
func (g *Gate) within(cur string) bool {
	if g.real == "/" || cur == g.real {
		return true
	}
	rest, ok := strings.CutPrefix(cur, g.real)
	return ok && rest[0] == '/'
}

// above reports whether cur is a directory the working directory is in: a
// resolution may pass there on its way down (an absolute link to a file
// inside starts at "/"), but may end only within.
func (g *Gate) above(cur string) bool {
	if cur == "/" {
		return true
	}
	rest, ok := strings.CutPrefix(g.real, cur)
	return ok && len(rest) > 0 && rest[0] == '/'
}

// resolve follows rel (clean, relative) from the working directory's real
// path as the kernel would: an existing component that is a symbolic link
// is replaced by its target; from the first missing component on, the rest
// is taken lexically. Every step must stay within the working directory or
// on the way down to it, and the end must be within.
func (g *Gate) resolve(p, rel string) (string, error) {
	cur, todo := g.real, rel
	exists := true
	links := 0
	via := "" // the last link followed, for the audit reason
	for todo != "" {
		var c string
		c, todo, _ = strings.Cut(todo, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			exists = true // look again from the directory above
		default:
			next := cur + "/" + c
			if cur == "/" {
				next = "/" + c
			}
			if !exists || g.onRealPath(next) {
				// Missing from here on, or a directory of the work
				// directory's resolved path: no link to look for.
				cur = next
				break
			}
			info, err := os.Lstat(next)
			switch {
			case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ENAMETOOLONG):
				exists = false
				cur = next
			case err != nil:
				return "", unchecked("path %q: cannot look at %s: %v", p, next, err)
			case info.Mode()&os.ModeSymlink != 0:
				if links++; links > maxLinks {
					return "", unchecked("path %q runs through more than %d symbolic links", p, maxLinks)
				}
				target, err := os.Readlink(next)
				if err != nil {
					return "", unchecked("path %q: cannot read the symbolic link %s: %v", p, next, err)
				}
				via = next
				if filepath.IsAbs(target) {
					cur = "/"
				}
				if todo != "" {
					target += "/" + todo
				}
				todo = target
				continue
			default:
				cur = next
			}
		}
		if !g.within(cur) && !g.above(cur) {
			return "", g.escape(p, cur, via)
		}
	}
	if !g.within(cur) {
		return "", g.escape(p, cur, via)
	}
	return cur, nil
}

// onRealPath reports whether p is the working directory's real path or one
// of the directories it is in: those are known to exist and to be no links.
func (g *Gate) onRealPath(p string) bool {
	return p == g.real || g.above(p)
}

func (g *Gate) escape(p, cur, via string) error {
	if via != "" {
		return outside("path %q leads to %s, outside the working directory %s, through the symbolic link %s", p, cur, g.real, via)
	}
	return outside("path %q leads to %s, outside the working directory %s", p, cur, g.real)
}
