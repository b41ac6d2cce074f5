// Package rollback saves the files a session's tools are about to change and
// puts them back afterwards: `rein rollback SESSION`.
//
// Before a tool that changes files runs (write_file, edit_file: any
// tool.Changer), the agent loop calls Store.Snapshot for each path the call
// names. The first time a path is named in a session its state is saved —
// the bytes and mode of a regular file, the target of a symbolic link, or
// the fact that nothing was there — in a per-session store under the state
// directory: a journal of one JSON line per path, and a copy ("blob") of
// each file. Both are on disk (fsynced) before Snapshot returns, so a tool
// never changes a file whose earlier state is not saved, even if rein is
// killed a moment later.
//
// After the tool ran, the loop calls Store.Settle, which records what the
// call left at each path (its SHA-256, or nothing). Restore puts a path back
// only while it still holds that: a file edited, filled or re-created after
// the session is Kept, unless Force, which copies it into the store first.
//
// Restore undoes the session: newest snapshot first, each path gets its
// first state back — files are written atomically (a temporary file renamed
// over the path) and then read back and checked against the SHA-256 in the
// journal; files the agent created are deleted, with the directories it
// created for them when they are empty. Running it twice is harmless: the
// second run finds everything unchanged.
//
// Every read and write goes through an os.Root opened on the work
// directory, so neither saving nor restoring follows a symbolic link out of
// it, and a path in a damaged or edited journal cannot name a file outside
// it.
//
// What it will not do: restore what a tool changed without declaring it or
// having it staged (a shell command's writes are saved only when the
// landlock sandbox staged them: see sandbox.Staged and bash.Staging;
// otherwise they are out of reach), restore ownership or timestamps, remove
// directories that are not empty, or save files larger than the size cap
// (the tool is refused instead). It keeps the store after a restore; the
// store holds copies of the user's files and is private to the user (0700).
package rollback

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/statedir"
)

// DefaultMaxFileSize is the largest file Snapshot saves unless WithMaxFileSize
// says otherwise.
const DefaultMaxFileSize = 64 << 20

// Errors, for callers that branch on them.
var (
	// ErrUnknownSession: the state directory holds no store for the session.
	ErrUnknownSession = errors.New("no snapshots for this session")
	// ErrBusy: the session's store is in use (the session is still running,
	// or another rollback of it is).
	ErrBusy = errors.New("session store in use")
	// ErrTooLarge: the file is larger than the snapshot size cap.
	ErrTooLarge = errors.New("file too large to snapshot")
	// ErrUnsupported: the path is something other than a regular file, a
	// symbolic link or nothing (a directory, a device, a pipe).
	ErrUnsupported = errors.New("cannot snapshot this kind of file")
	// ErrOutside: the path leads out of the work directory.
	ErrOutside = errors.New("outside the work directory")
	// ErrPath: the path is not a clean path relative to the work directory.
	ErrPath = errors.New("not a relative path inside the work directory")
	// ErrStore: the store itself could not be written (a full or
	// read-only state directory, an I/O error): the change was refused for
	// want of room to save it, not for anything about the path.
	ErrStore = errors.New("the rollback store could not be written")
	// ErrClosed: Snapshot after Close.
	ErrClosed = errors.New("snapshot store is closed")
)

// Dir is where session stores go: $XDG_STATE_HOME/rein/rollback, or
// ~/.local/state/rein/rollback when XDG_STATE_HOME is unset (never in a
// test binary: see statedir.Root).
func Dir() (string, error) {
	root, err := statedir.Root()
	if err != nil {
		return "", fmt.Errorf("rollback: %w; or pass a state directory", err)
	}
	return filepath.Join(root, "rollback"), nil
}

// Kind is what was at a path when it was saved.
type Kind string

// The kinds of entry.
const (
	KindFile    Kind = "file"    // a regular file: mode, size, SHA-256, and a blob of its bytes
	KindSymlink Kind = "symlink" // a symbolic link: its target, not followed
	KindAbsent  Kind = "absent"  // nothing: the agent created it
)

// The kinds of the journal's other lines, which follow a path's snapshot
// line: one before each later call that may change the path, one after
// each call that may have.
const (
	kindChanging Kind = "changing" // a call is about to change the path
	kindLeft     Kind = "left"     // what the call left there (the line's "left")
)

// State is what a call left at a path: its kind, and the size and SHA-256
// of a regular file or the target of a link. A rollback compares it with
// what is there now to tell the agent's version from a later edit; the
// mode is not compared (a mode change alone is not an edit worth keeping).
type State struct {
	Kind   Kind   `json:"kind"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Target string `json:"target,omitempty"`
}

// check refuses a State that no call can leave.
func (st State) check() error {
	switch st.Kind {
	case KindFile:
		if st.Size < 0 || st.Size > maxSize || !isSHA256(st.SHA256) || st.Target != "" {
			return errors.New("a file left needs a size and a SHA-256, and nothing else")
		}
	case KindSymlink:
		if st.Target == "" || strings.IndexByte(st.Target, 0) >= 0 || st.Size != 0 || st.SHA256 != "" {
			return errors.New("a link left needs a target, and nothing else")
		}
	case KindAbsent:
		if st.Size != 0 || st.SHA256 != "" || st.Target != "" {
			return errors.New("nothing left has no content")
		}
	default:
		return fmt.Errorf("unknown kind left %q", st.Kind)
	}
	return nil
}

// Mode is a file's permission bits with setuid, setgid and sticky, in the
// Unix octal encoding. In the journal it is a string such as "0644".
type Mode uint32

// modeOf keeps the bits of m that Mode holds.
func modeOf(m iofs.FileMode) Mode {
	b := Mode(m.Perm())
	if m&iofs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&iofs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&iofs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

// FileMode returns m as an fs.FileMode.
func (m Mode) FileMode() iofs.FileMode {
	f := iofs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		f |= iofs.ModeSetuid
	}
	if m&0o2000 != 0 {
		f |= iofs.ModeSetgid
	}
	if m&0o1000 != 0 {
		f |= iofs.ModeSticky
	}
	return f
}

// MarshalText renders m in octal, like "0644".
func (m Mode) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%04o", uint32(m)), nil }

// UnmarshalText parses an octal mode of at most 07777.
func (m *Mode) UnmarshalText(b []byte) error {
	if len(b) == 0 || len(b) > 5 {
		return fmt.Errorf("mode %q: want octal digits like 0644", b)
	}
	n, err := strconv.ParseUint(string(b), 8, 32)
	if err != nil || n > 0o7777 {
		return fmt.Errorf("mode %q: want octal digits like 0644", b)
	}
	*m = Mode(n)
	return nil
}

// Entry is one line of a session's journal: the first state of one path.
type Entry struct {
	Seq  uint64 `json:"seq"`
	Path string `json:"path"` // clean, relative to the work directory
	Kind Kind   `json:"kind"`
	// KindFile.
	Mode   Mode   `json:"mode,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// KindSymlink.
	Target string `json:"target,omitempty"`
	// KindAbsent: the directories above Path that did not exist either,
	// deepest first; a restore removes them when they are empty.
	Dirs []string `json:"dirs,omitempty"`
	// Via names the symbolic link through which Path was reached, when
	// Path was saved because a tool would write through that link.
	Via string `json:"via,omitempty"`

	// Read back from the journal's later lines, not part of this line:
	// Left is what the last call that changed Path left there (nil when
	// no line says); Changing, that rein stopped while a call was changing
	// Path (a line says a call was about to, none says what it left).
	Left     *State `json:"-"`
	Changing bool   `json:"-"`
}

// ID is the entry's snapshot id: the name of its blob, and what the audit
// log's intent records list.
func (e Entry) ID() string { return ID(e.Seq) }

// ID formats a snapshot sequence number as an id.
func ID(seq uint64) string { return fmt.Sprintf("%06d", seq) }

// The actions of a FileReport.
const (
	Restored  = "restored"  // the first state was written back (a file or a link)
	Deleted   = "deleted"   // the agent created the file; it was removed
	Unchanged = "unchanged" // the path is already in its first state
	Kept      = "kept"      // changed since the session left it: left alone (see Reason; Force overwrites)
	Failed    = "failed"    // see Err; the path may not be in its first state
)

// FileReport says what a restore did to one path (or, from Plan, what it
// would do).
type FileReport struct {
	Path   string
	Action string // Restored, Deleted, Unchanged, Kept or Failed
	Err    string // why, when Failed
	// Reason says why a path was Kept, or why what was there was copied
	// before it was restored or deleted.
	Reason string
	// Copy is where a copy of what was at Path was put before it was
	// overwritten or deleted (from Plan: where it would be put).
	Copy string
	// Forcible: Kept, and Force would restore it.
	Forcible bool
}

// manifest describes a session's store.
type manifest struct {
	Version int       `json:"version"`
	Session string    `json:"session"`
	Workdir string    `json:"workdir"`
	Created time.Time `json:"created"`
}

// manifestVersion is the version of the stores this rein makes: version
// 2 records what each call left. Version 1 stores (without it) are read,
// and their paths restored only with Force.
const (
	manifestVersion = 2
	oldVersion      = 1
)

// Names inside a session's store.
const (
	manifestName = "manifest.json"
	journalName  = "journal.jsonl"
	blobsName    = "blobs"
	lockName     = "lock"
	replacedName = "replaced" // copies of what a restore overwrote or deleted
)
