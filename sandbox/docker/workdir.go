package docker

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/sandbox"
)

// checkWorkDir checks the work dir and returns the host path to mount: dir
// with its symbolic links resolved. The container sees it at dir itself.
// What may be mounted is sandbox.CheckWorkDir's decision, the same as
// Landlock's; this adds only what the runtime's --mount syntax cannot carry.
func checkWorkDir(dir, home string) (string, error) {
	bad := func(p string) (string, error) {
		return "", fmt.Errorf("%w: work dir %q: %q has a comma, quote or line break, which cannot be passed to the runtime's --mount; pass --workdir a directory whose path has none",
			sandbox.ErrInvalid, dir, p)
	}
	if strings.ContainsAny(dir, ",\"\n\r\x00") {
		return bad(dir)
	}
	src, err := sandbox.CheckWorkDir(dir, home)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(src, ",\"\n\r\x00") {
		return bad(src)
	}
	return src, nil
}

// within reports whether path is dir or lies inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
