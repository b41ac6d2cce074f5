package sandbox

import (
	"fmt"
	"io"
	"path/filepath"
)

// Program is a long-lived program a Landlock executor starts with Start:
// an MCP server, say, that rein talks to over its stdin and stdout for as
// long as a session lasts, unlike a Cmd, whose output is collected when it
// ends.
type Program struct {
	// Path is the program's absolute path. The program file itself is
	// readable and executable inside; its directory is not (it may be the
	// user's ~/bin or ~/go/bin, next to what the program has no business
	// reading).
	Path string
	// Args are its arguments, without the program.
	Args []string
	// Dir is the program's own directory, absolute and existing: its
	// working directory, HOME and TMPDIR, and the only place it may write.
	// The caller makes it and removes it.
	Dir string
	// Env is its complete environment, as for Cmd.Env (nil: MinimalEnv);
	// HOME and TMPDIR are forced to Dir and, under NetProxy, the proxy's
	// variables are set. A backend never adds the parent's environment.
	Env []string
	// Read are more absolute paths the program may read and execute (an
	// interpreter's library outside the system directories, a directory
	// of data). None may be the root, hold the home directory or be, lie
	// in or hold a credential path (CredentialPaths).
	Read []string
	// Stderr receives what the program writes on its standard error; nil
	// discards it.
	Stderr io.Writer
}

// checkProgram refuses a Program the sandbox cannot start as given.
func checkProgram(p Program, home string) error {
	switch {
	case !filepath.IsAbs(p.Path):
		return fmt.Errorf("%w: program %q is not an absolute path", ErrInvalid, p.Path)
	case !filepath.IsAbs(p.Dir) || filepath.Clean(p.Dir) != p.Dir:
		return fmt.Errorf("%w: program directory %q is not absolute and clean", ErrInvalid, p.Dir)
	}
	if reason := exposes(p.Dir, home); reason != "" {
		return fmt.Errorf("%w: program directory %s: making it writable would expose %s", ErrInvalid, p.Dir, reason)
	}
	for _, r := range p.Read {
		if !filepath.IsAbs(r) || filepath.Clean(r) != r {
			return fmt.Errorf("%w: readable path %q is not absolute and clean", ErrInvalid, r)
		}
		if reason := exposesRead(r, home); reason != "" {
			return fmt.Errorf("%w: readable path %s would expose %s: name a narrower directory", ErrInvalid, r, reason)
		}
	}
	return nil
}

// exposesRead says what making path readable would expose that the
// sandbox keeps closed, or "" when nothing is known to be sensitive:
// unlike a writable directory, a system directory may be read.
func exposesRead(path, home string) string {
	if path == "/" {
		return "the whole file system"
	}
	for _, h := range homeRoots {
		if inside(h, path) {
			return "the home directories in " + h
		}
	}
	if home == "" || home == "/" {
		return ""
	}
	for _, h := range homes(home) {
		if inside(h, path) {
			return "the home directory " + h
		}
		for _, cd := range CredentialPaths(h) {
			if inside(path, cd) || inside(cd, path) {
				return "the credential directory " + cd
			}
		}
	}
	return ""
}
