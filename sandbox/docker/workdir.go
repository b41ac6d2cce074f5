package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/sandbox"
)

// credentialDirs are paths, relative to a home directory, holding secrets.
// A work dir inside one of them is refused; a work dir holding the home
// directory is refused anyway.
var credentialDirs = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".password-store",
	".config/gcloud", ".config/gh", ".config/op", ".config/rclone", ".local/share/keyrings", ".mozilla",
	".config/google-chrome", ".config/chromium", ".pulumi", ".oci", ".terraform.d", ".cargo", ".m2", ".gem"}

// systemDirs may be neither the work dir, nor inside it, nor hold it: a
// read-write mount of any of them (the docker socket under /run, /etc as
// root) would give a command the host.
var systemDirs = []string{"/etc", "/proc", "/sys", "/dev", "/boot", "/run", "/var/run", "/var/lib/docker",
	"/var/lib/containers", "/usr", "/bin", "/sbin", "/lib", "/lib64"}

// homeRoots hold every user's home directory; the work dir may lie in one
// of them but not hold it.
var homeRoots = []string{"/root", "/home", "/Users"}

// checkWorkDir checks the work dir and returns the host path to mount: dir
// with its symbolic links resolved. The container sees it at dir itself.
func checkWorkDir(dir, home string) (string, error) {
	bad := func(format string, a ...any) (string, error) {
		return "", fmt.Errorf("%w: work dir %q: %s", sandbox.ErrInvalid, dir, fmt.Sprintf(format, a...))
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return bad("not an absolute path")
	}
	if filepath.Clean(dir) != dir {
		return bad("not a clean path (want %q)", filepath.Clean(dir))
	}
	if strings.ContainsAny(dir, ",\"\n\r\x00") {
		return bad("a comma, quote or line break cannot be passed to the runtime's --mount")
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
	if strings.ContainsAny(src, ",\"\n\r\x00") {
		return bad("it resolves to %q; a comma, quote or line break cannot be passed to the runtime's --mount", src)
	}
	for _, p := range []string{dir, src} {
		if reason := exposes(p, home); reason != "" {
			return bad("mounting it would expose %s", reason)
		}
	}
	return src, nil
}

// exposes says what mounting dir would expose, or "" when nothing is known
// to be sensitive.
func exposes(dir, home string) string {
	if dir == "/" {
		return "the whole file system"
	}
	if home != "" && home != "/" {
		for _, h := range homes(home) {
			if within(h, dir) {
				return "the home directory " + h
			}
			for _, c := range credentialDirs {
				if cd := filepath.Join(h, c); within(dir, cd) {
					return "the credential directory " + cd
				}
			}
		}
	}
	for _, s := range systemDirs {
		if within(dir, s) || within(s, dir) {
			return "the system directory " + s
		}
	}
	for _, h := range homeRoots {
		if within(h, dir) {
			return "the home directories in " + h
		}
	}
	return ""
}

// homes returns home as given and with its links resolved.
func homes(home string) []string {
	out := []string{filepath.Clean(home)}
	if r, err := filepath.EvalSymlinks(home); err == nil && r != out[0] {
		out = append(out, r)
	}
	return out
}

// within reports whether path is dir or lies inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
