package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/secret"
)

// hostDirs may be neither the work dir, nor inside it, nor hold it:
// writable to a command (the docker socket under /run, /etc as root), any
// of them would give it the host.
var hostDirs = []string{"/etc", "/proc", "/sys", "/dev", "/boot", "/run", "/var/run", "/var/lib/docker",
	"/var/lib/containers", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/nix/store"}

// homeRoots hold every user's home directory; the work dir may lie in one
// of them but not hold it.
var homeRoots = []string{"/root", "/home", "/Users"}

// CredentialPaths returns the places under home where credentials live:
// secret.HomeCredentials, rein's one list. No backend makes them readable
// to a command, and no work dir may be one of them, lie inside one or hold
// one.
func CredentialPaths(home string) []string { return secret.HomeCredentials(home) }

// CheckWorkDir is the one work-dir check of every backend: it refuses a
// work dir that making writable to commands (Landlock's rule, docker's
// mount) would open what the sandbox keeps closed, and returns dir with its
// symbolic links resolved. dir must be absolute, clean and an existing
// directory; neither it nor what it resolves to may be the root, hold the
// home directory or every user's, be, lie inside or hold a credential path
// of home (CredentialPaths, with home as given and resolved), or overlap a
// system directory. home is the user's home directory, "" when there is
// none (the home checks are then skipped). The error wraps ErrInvalid and
// names --workdir, the fix.
func CheckWorkDir(dir, home string) (string, error) {
	bad := func(format string, a ...any) (string, error) {
		return "", fmt.Errorf("%w: work dir %q: %s; pass --workdir a project directory (not your home, a credential store or a system directory)",
			ErrInvalid, dir, fmt.Sprintf(format, a...))
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return bad("not an absolute path")
	}
	if filepath.Clean(dir) != dir {
		return bad("not a clean path (want %q)", filepath.Clean(dir))
	}
	src, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return bad("%v", err)
	}
	if fi, err := os.Stat(src); err != nil {
		return bad("%v", err)
	} else if !fi.IsDir() {
		return bad("not a directory")
	}
	for _, p := range []string{dir, src} {
		if reason := exposes(p, home); reason != "" {
			return bad("making it writable to commands would expose %s", reason)
		}
	}
	return src, nil
}

// exposes says what making dir writable would expose, or "" when nothing
// is known to be sensitive.
func exposes(dir, home string) string {
	if dir == "/" {
		return "the whole file system"
	}
	if home != "" && home != "/" {
		for _, h := range homes(home) {
			if inside(h, dir) {
				return "the home directory " + h
			}
			for _, cd := range CredentialPaths(h) {
				if inside(dir, cd) || inside(cd, dir) {
					return "the credential directory " + cd
				}
			}
		}
	}
	for _, s := range hostDirs {
		if inside(dir, s) || inside(s, dir) {
			return "the system directory " + s
		}
	}
	for _, h := range homeRoots {
		if inside(h, dir) {
			return "the home directories in " + h
		}
	}
	return ""
}

// homes returns home clean as given and with its links resolved.
func homes(home string) []string {
	out := []string{filepath.Clean(home)}
	if r, err := filepath.EvalSymlinks(home); err == nil && r != out[0] {
		out = append(out, r)
	}
	return out
}

// inside reports whether path is dir or lies inside it; both are clean
// and absolute.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && (len(rel) < 3 || rel[:3] != "../")
}
