package sandbox

import (
	"io/fs"
	"path"
)

// readableParts returns the parts of the tree dir of fsys that every user
// may read: dir itself ("." for the root of fsys) when everything in it is
// world-readable, else the largest world-readable subtrees and files in it,
// in lexical order. A file counts when it has o+r, a directory when it has
// o+rx and everything in it counts. Symlinks are left out and do not spoil
// their directory: whoever follows one is judged at its target. Sockets,
// pipes and devices, and whatever cannot be listed or examined, are left out
// and do spoil it.
//
// The landlock backend grants /etc this way, so /etc/shadow, /etc/sudoers
// and private keys stay unreadable even to root inside the sandbox.
func readableParts(fsys fs.FS, dir string) []string {
	whole, parts := readableTree(fsys, dir)
	if whole {
		return []string{dir}
	}
	return parts
}

// readableTree reports whether all of dir is world-readable, and if not,
// which parts of it are.
func readableTree(fsys fs.FS, dir string) (whole bool, parts []string) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return false, nil
	}
	whole = true
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		info, err := e.Info() // lstat: a symlink is seen as one
		if err != nil {
			whole = false
			continue
		}
		perm := info.Mode().Perm()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			// Judged at its target.
		case info.IsDir():
			if perm&0o005 != 0o005 {
				whole = false
				continue
			}
			w, sub := readableTree(fsys, p)
			if w {
				parts = append(parts, p)
			} else {
				whole = false
				parts = append(parts, sub...)
			}
		case info.Mode().IsRegular() && perm&0o004 != 0:
			parts = append(parts, p)
		default:
			whole = false
		}
	}
	return whole, parts
}
