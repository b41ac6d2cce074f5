package sandbox

import "context"

// Masks are what a sandbox hides from commands, or lets them read but not
// write: Files and Dirs hold credentials (secret.CredentialFile) and are
// covered by an empty file or directory; ReadOnly are protected paths
// (package protect: code that runs later) that exist. All are absolute.
type Masks struct {
	Files, Dirs, ReadOnly []string
}

// FindMasks lists the masks for a work dir, as the landlock backend applies
// them: the work dir's credential files and directories, its protected
// paths, and, when home is not empty, the credential places under home
// that exist and lie outside the work dir. Another backend (docker) uses
// it so that both hide the same things.
func FindMasks(work, home string) Masks {
	m := findMasks(context.Background(), work, home)
	return Masks{Files: m.files, Dirs: m.dirs, ReadOnly: m.ro}
}
