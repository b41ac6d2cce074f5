package docker

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/sandbox"
)

// maxMasks bounds the mounts a container gets for masks: past it, Start
// fails rather than leave a credential file unmasked.
const maxMasks = 2000

// maskSource is an empty read-only file and an empty read-only directory,
// in a directory of their own, that the container mounts over the work
// dir's credential files and directories.
// Its dir is held (sandbox.MakeHeld): a rein killed before it removed it
// leaves it for the next executor's sweep.
type maskSource struct {
	dir, file, empty string
	lock             *os.File
}

func newMaskSource() (maskSource, error) {
	dir, lock, err := sandbox.MakeHeld("docker-mask")
	if err != nil {
		return maskSource{}, fmt.Errorf("the empty file to mask credentials with: %w", err)
	}
	s := maskSource{dir: dir, file: filepath.Join(dir, "file"), empty: filepath.Join(dir, "dir"), lock: lock}
	if err := os.WriteFile(s.file, nil, 0o444); err != nil {
		s.remove()
		return maskSource{}, fmt.Errorf("the empty file to mask credentials with: %w", err)
	}
	if err := os.Mkdir(s.empty, 0o555); err != nil {
		s.remove()
		return maskSource{}, fmt.Errorf("the empty directory to mask credentials with: %w", err)
	}
	return s, nil
}

func (s maskSource) remove() {
	if s.dir == "" {
		return
	}
	_ = os.Chmod(s.empty, 0o700)
	if err := os.RemoveAll(s.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = err // a leftover empty temp dir harms nothing; the sweep takes it
	}
	if s.lock != nil {
		_ = s.lock.Close()
	}
}

// maskMounts returns the --mount flags that hide the credential files and
// directories of the work dir src (mounted at work in the container) behind
// empty ones, and keep its protected paths read-only: the same masks as
// the landlock backend (sandbox.FindMasks). A protected path is mounted
// only when it is what it was when found, no symbolic link on its way, so
// that a link planted in its place cannot bring a host file into the
// container.
func maskMounts(m sandbox.Masks, src, work string, s maskSource) ([]string, error) {
	if n := len(m.Files) + len(m.Dirs) + len(m.ReadOnly); n > maxMasks {
		return nil, fmt.Errorf("%w: the work dir has %d credential files and protected paths to mask, more than %d; use a smaller --workdir", sandbox.ErrStart, n, maxMasks)
	}
	target := func(p string) (string, bool) {
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", false
		}
		return filepath.Join(work, rel), true
	}
	var out []string
	add := func(source, dst string) error {
		f, err := mountFlag(source, dst, true)
		if err != nil {
			return err
		}
		out = append(out, f)
		return nil
	}
	for _, list := range []struct {
		paths  []string
		source string
	}{{m.Files, s.file}, {m.Dirs, s.empty}} {
		for _, p := range list.paths {
			dst, ok := target(p)
			if !ok {
				continue // outside the work dir: not in the container at all
			}
			if err := add(list.source, dst); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range m.ReadOnly {
		dst, ok := target(p)
		if !ok {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			continue // gone, or a link: nothing to keep, or not ours to mount
		}
		if real, err := filepath.EvalSymlinks(p); err != nil || real != p {
			continue
		}
		if err := add(p, dst); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mountFlag spells a bind mount as --mount takes it: a CSV line, so a
// path with a comma or a quote is quoted, not split into further options.
func mountFlag(source, target string, readonly bool) (string, error) {
	if strings.ContainsAny(source+target, "\x00\n\r") {
		return "", fmt.Errorf("%w: cannot mount %q in the container: its name holds a line break", sandbox.ErrStart, target)
	}
	fields := []string{"type=bind", "source=" + source, "target=" + target}
	if readonly {
		fields = append(fields, "readonly")
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.Write(fields); err != nil {
		return "", fmt.Errorf("%w: masking %q: %w", sandbox.ErrStart, target, err)
	}
	w.Flush()
	return "--mount=" + strings.TrimSuffix(b.String(), "\n"), nil
}
