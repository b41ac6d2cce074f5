// Package checkpoint keeps what files held before the current turn of a
// conversation changed them, so that `/undo` in rein chat can put them
// back: a per-turn undo beside the session's rollback store (which keeps
// only each path's state before the session first changed it).
//
// A Book works inside one work directory through os.Root: a path that
// leaves it (.., an absolute path, a symbolic link leading out) is never
// read or written. What a turn changed outside the file tools (a shell
// command) is not known to it.
package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// MaxFile is the largest file a Book saves; a larger one is reported as
// not saved, and /undo leaves it alone.
const MaxFile = 8 << 20

// Book holds the saved state of the paths the current turn changed.
type Book struct {
	root *os.Root

	mu    sync.Mutex
	saved map[string]*state
	order []string
}

// state is what a path held before the turn changed it.
type state struct {
	absent bool
	data   []byte
	mode   fs.FileMode
	err    error // why it could not be saved
}

// Open opens a Book on the work directory dir.
func Open(dir string) (*Book, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return &Book{root: root, saved: map[string]*state{}}, nil
}

// Close releases the work directory.
func (b *Book) Close() error { return b.root.Close() }

// Begin starts a new turn: what the last turn saved is forgotten.
func (b *Book) Begin() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.saved, b.order = map[string]*state{}, nil
}

// Save records what rel (relative to the work directory) holds now, before
// a call changes it; only the first Save of a path in a turn counts.
func (b *Book) Save(rel string) {
	rel = filepath.Clean(rel)
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.saved[rel]; ok {
		return
	}
	b.saved[rel] = b.read(rel)
	b.order = append(b.order, rel)
}

func (b *Book) read(rel string) *state {
	info, err := b.root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &state{absent: true}
	case err != nil:
		return &state{err: err}
	case !info.Mode().IsRegular():
		return &state{err: fmt.Errorf("%s is not a regular file", rel)}
	case info.Size() > MaxFile:
		return &state{err: fmt.Errorf("%s is %d bytes, more than the %d bytes saved for /undo", rel, info.Size(), MaxFile)}
	}
	data, err := b.root.ReadFile(rel)
	if err != nil {
		return &state{err: err}
	}
	return &state{data: data, mode: info.Mode().Perm()}
}

// Change is one path of the turn: what Undo did or would do with it.
type Change struct {
	Path string
	// Action is "created", "changed" or "deleted" for Changed, and
	// "removed", "restored" or "kept" for Undo.
	Action string
	Err    error // why it was kept
}

// Changed returns the paths the turn changed, in the order first saved:
// those whose state now differs from what was saved.
func (b *Book) Changed() []Change {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Change
	for _, rel := range b.order {
		before, now := b.saved[rel], b.read(rel)
		switch {
		case before.err != nil:
			out = append(out, Change{Path: rel, Action: "changed", Err: before.err})
		case before.absent && !now.absent:
			out = append(out, Change{Path: rel, Action: "created"})
		case !before.absent && now.absent:
			out = append(out, Change{Path: rel, Action: "deleted"})
		case !before.absent && (now.err != nil || !bytes.Equal(before.data, now.data) || before.mode != now.mode):
			out = append(out, Change{Path: rel, Action: "changed"})
		}
	}
	return out
}

// Undo puts back what the turn's paths held before it, newest first, and
// forgets them. A path that could not be saved is kept, with the reason.
func (b *Book) Undo() []Change {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Change
	for _, rel := range slices.Backward(b.order) {
		st := b.saved[rel]
		c := Change{Path: rel}
		switch {
		case st.err != nil:
			c.Action, c.Err = "kept", fmt.Errorf("not saved before the turn: %w", st.err)
		case st.absent:
			c.Action = "removed"
			if err := b.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				c.Action, c.Err = "kept", err
			}
		default:
			c.Action = "restored"
			if err := b.root.WriteFile(rel, st.data, st.mode); err != nil {
				c.Action, c.Err = "kept", err
			} else if err := b.root.Chmod(rel, st.mode); err != nil {
				c.Action, c.Err = "kept", err
			}
		}
		out = append(out, c)
	}
	b.saved, b.order = map[string]*state{}, nil
	return out
}
