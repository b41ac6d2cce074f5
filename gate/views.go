package gate

import (
	"net/url"
	"path"
	"slices"

	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/tool"
)

// The typed views of a call. Each is computed from the arguments parsed
// once (Value), on first use, and kept in the Call, so that every gate
// judges the same parse of the same values: the command lines, the paths
// and the URLs the tool will run with.

// PathArg is one argument the call's tool marks as a path, a glob or a
// directory.
type PathArg struct {
	Name  string    // the argument's name
	Role  tool.Role // tool.RolePath, tool.RoleGlob or tool.RoleDir
	Value string    // the value, as the tool receives it; "" when it is not a string
	// Clean is path.Clean(Value) ("." for ""), for matching; every check
	// of where a path leads reads Value, the text the tool opens.
	Clean string
	// String is false when the argument is present but not a string (a
	// number, an object, null): it cannot be judged as a path.
	String bool
}

// URLArg is one argument the call's tool marks as a URL.
type URLArg struct {
	Name  string   // the argument's name
	Value string   // the value, as the tool receives it; "" when it is not a string
	URL   *url.URL // Value parsed with url.Parse; nil when Err is set or it is not a string
	Err   error    // why Value does not parse as a URL
	// String is false when the argument is present but not a string.
	String bool
}

// Commands returns the call's command lines: the value of every argument
// its tool marks tool.RoleCommand that is a string, parsed once with
// mvdan.cc/sh (package cmdline), in argument-name order. An argument that
// is absent or not a string has no line (Str and Has tell the two apart).
// The lines are shared by every gate; they must not be changed.
func (c *Call) Commands() []cmdline.Line {
	if !c.cmdsDone {
		c.cmdsDone = true
		var buf [4]string
		for _, name := range c.ArgsWith(buf[:0], tool.RoleCommand) {
			if src, ok := c.Str(name); ok {
				if c.parser == nil {
					c.parser = cmdline.NewParser()
				}
				c.cmds = append(c.cmds, cmdline.Parse(c.parser, name, src))
			}
		}
	}
	return c.cmds
}

// Paths returns the call's path, glob and directory arguments that are
// present, in argument-name order, each cleaned once.
func (c *Call) Paths() []PathArg {
	if !c.pathsDone {
		c.pathsDone = true
		for _, name := range c.argsOf(tool.RolePath, tool.RoleGlob, tool.RoleDir) {
			if !c.Has(name) {
				continue
			}
			p := PathArg{Name: name, Role: c.Role(name)}
			p.Value, p.String = c.Str(name)
			p.Clean = path.Clean(p.Value)
			c.paths = append(c.paths, p)
		}
	}
	return c.paths
}

// URLs returns the call's URL arguments that are present, in
// argument-name order, each parsed once with net/url.
func (c *Call) URLs() []URLArg {
	if !c.urlsDone {
		c.urlsDone = true
		var buf [4]string
		for _, name := range c.ArgsWith(buf[:0], tool.RoleURL) {
			if !c.Has(name) {
				continue
			}
			u := URLArg{Name: name}
			if u.Value, u.String = c.Str(name); u.String {
				u.URL, u.Err = url.Parse(u.Value)
			}
			c.urls = append(c.urls, u)
		}
	}
	return c.urls
}

// argsOf returns the names of the arguments with any of roles, sorted.
func (c *Call) argsOf(roles ...tool.Role) []string {
	if c.Tool == nil {
		return nil
	}
	var names []string
	for name, r := range c.Tool.Spec().Roles {
		if slices.Contains(roles, r) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Memo returns the value kept in the call under key, computed with compute
// on first use: what one gate derives from the call (the shell analysis of
// its command lines) and the gates after it read instead of deriving it
// again. key must be comparable and should be of a type private to the
// package that fills the slot, so that no other package can fill it. The
// value must not be changed once computed.
func (c *Call) Memo(key any, compute func() any) any {
	for _, m := range c.memo {
		if m.key == key {
			return m.val
		}
	}
	v := compute()
	c.memo = append(c.memo, memoEntry{key, v})
	return v
}

type memoEntry struct{ key, val any }
