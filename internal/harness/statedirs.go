package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrStateInWorkDir marks an audit or state directory that the session's
// work dir holds (or that holds the work dir): the agent's tools and
// commands could rewrite it.
var ErrStateInWorkDir = errors.New("rein's own records would be inside the work dir")

// checkOutside refuses dir, where rein keeps what (its audit log, its
// rollback snapshots), when it is inside the work dir or holds it,
// compared with every symbolic link resolved: the agent can write
// anywhere in the work dir, so a later session's agent could rewrite an
// earlier session's log (and recompute its chain) or its snapshots. fix
// says which flag or setting moves it.
func checkOutside(workdir, what, dir, fix string) error {
	w, err := realPath(workdir)
	if err != nil {
		return fmt.Errorf("work dir %s: %w", workdir, err)
	}
	d, err := realPath(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, dir, err)
	}
	if within(d, w) || within(w, d) {
		return fmt.Errorf("%w: the %s %s and the work dir %s overlap, so the agent could rewrite it; %s, or pass --workdir elsewhere",
			ErrStateInWorkDir, what, dir, workdir, fix)
	}
	return nil
}

// realPath returns p absolute with the symbolic links of its longest
// existing part resolved; the missing rest is appended as written.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether path is dir or lies inside it; both are clean
// and absolute.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+string(filepath.Separator))
}
