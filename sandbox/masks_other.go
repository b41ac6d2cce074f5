//go:build !linux

package sandbox

// Masks are what a sandbox hides from commands, or lets them read but not
// write; see the Linux documentation.
type Masks struct {
	Files, Dirs, ReadOnly []string
}

// FindMasks finds nothing off Linux, where no backend can mount over paths.
func FindMasks(work, home string) Masks { return Masks{} }
