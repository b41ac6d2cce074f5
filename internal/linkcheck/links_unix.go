//go:build unix

package linkcheck

import (
	"os"
	"syscall"
)

// links is fi's link count; 1 when the system does not say.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
