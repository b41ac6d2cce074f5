package rollback

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/session"
)

// Journal is a session's store as read back: what was saved, in order.
type Journal struct {
	Dir     string // the session's store directory
	Session string
	Workdir string // absolute
	Created time.Time
	// Version is the store's manifest version; a version 1 store does not
	// record what the agent left, so its paths are restored only with
	// Force.
	Version int
	// Entries are the journal's valid lines, oldest first; each path once.
	Entries []Entry
	// Notes are what rein left unfinished when it stopped, harmless to a
	// rollback: a journal line cut short, a blob never recorded. A snapshot
	// is on disk before its tool runs, so neither can belong to a change.
	Notes []string
	// Damaged are journal lines that are whole but not valid: the store was
	// changed or damaged after rein wrote it. What they named is not
	// restored, and Plan and Restore report each as Failed.
	Damaged []string
}

// Load reads the store of session in dir. It changes nothing. A session
// without a store is ErrUnknownSession.
func Load(dir, sessionID string) (*Journal, error) {
	if err := session.CheckID(sessionID); err != nil {
		return nil, fmt.Errorf("rollback: %w", err)
	}
	sdir := filepath.Join(dir, sessionID)
	m, err := readManifest(sdir)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s in %s", ErrUnknownSession, sessionID, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("rollback: %s: %w", sessionID, err)
	}
	if m.Session != sessionID {
		return nil, fmt.Errorf("rollback: %s: the manifest names session %q", sdir, m.Session)
	}
	j := &Journal{Dir: sdir, Session: sessionID, Workdir: m.Workdir, Created: m.Created, Version: m.Version}
	data, err := os.ReadFile(filepath.Join(sdir, journalName))
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("rollback: %s: %w", sessionID, err)
	}
	p := parseJournal(data)
	j.Entries, j.Notes, j.Damaged = p.entries, p.notes, p.damaged
	j.Notes = append(j.Notes, orphans(filepath.Join(sdir, blobsName), j.Entries)...)
	return j, nil
}

// readManifest reads and checks a store's manifest.
func readManifest(sdir string) (manifest, error) {
	var m manifest
	data, err := os.ReadFile(filepath.Join(sdir, manifestName))
	if err != nil {
		return m, err
	}
	if err := decodeStrict(data, &m); err != nil {
		return m, fmt.Errorf("manifest: %w", err)
	}
	switch {
	case m.Version != manifestVersion && m.Version != oldVersion:
		return m, fmt.Errorf("manifest: version %d; this rein reads versions %d and %d", m.Version, oldVersion, manifestVersion)
	case !filepath.IsAbs(m.Workdir) || filepath.Clean(m.Workdir) != m.Workdir || strings.IndexByte(m.Workdir, 0) >= 0:
		return m, fmt.Errorf("manifest: work directory %q is not a clean absolute path", m.Workdir)
	}
	return m, nil
}

// maxSize bounds the size a journal entry may claim.
const maxSize = 1 << 40

// parsed is a journal as read: its snapshot entries (with what the later
// lines say each call left), notes on a last line cut short, complaints
// about damaged lines, how many lines were marks (changing, left), and the
// highest seq.
type parsed struct {
	entries        []Entry
	notes, damaged []string
	marks          int
	last           uint64
}

// line is one journal line: a snapshot (an Entry), or a mark on a path
// saved before it: kindChanging, or kindLeft with Left.
type line struct {
	Entry
	Left *State `json:"left,omitempty"`
}

// parseJournal reads journal lines. It never fails as a whole: a bad line
// spoils only itself.
func parseJournal(data []byte) parsed {
	var p parsed
	index := map[string]int{} // path → its entry
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			p.notes = append(p.notes, fmt.Sprintf("journal line %d is incomplete (%d bytes, no newline): rein stopped while writing it, before the change it was written for; ignored", n, len(data)))
			break
		}
		text := data[:i]
		data = data[i+1:]
		l, err := parseLine(text)
		k, known := index[l.Path]
		switch {
		case err != nil:
		case l.Seq <= p.last:
			err = fmt.Errorf("line %d comes after %d", l.Seq, p.last)
		case l.Kind.mark() && !known:
			err = fmt.Errorf("a %s line for %q, which has no snapshot before it", l.Kind, l.Path)
		case !l.Kind.mark() && known:
			err = fmt.Errorf("a second snapshot of %q", l.Path)
		}
		if err != nil {
			p.damaged = append(p.damaged, fmt.Sprintf("journal line %d is damaged (%v)", n, err))
			continue
		}
		p.last = l.Seq
		switch l.Kind {
		case kindChanging:
			p.entries[k].Changing = true
			p.marks++
		case kindLeft:
			p.entries[k].Left, p.entries[k].Changing = l.Left, false
			p.marks++
		default:
			e := l.Entry
			e.Changing = true // until a line says what its call left
			index[e.Path] = len(p.entries)
			p.entries = append(p.entries, e)
		}
	}
	return p
}

// mark reports whether a line of kind k marks a saved path rather than
// saving one.
func (k Kind) mark() bool { return k == kindChanging || k == kindLeft }

// parseLine decodes and checks one journal line.
func parseLine(text []byte) (line, error) {
	var l line
	if err := decodeStrict(text, &l); err != nil {
		return l, err
	}
	if l.Seq == 0 {
		return l, errors.New("no seq")
	}
	if err := checkRel(l.Path); err != nil {
		return l, err
	}
	if l.Kind.mark() {
		e := l.Entry
		if e.Mode != 0 || e.Size != 0 || e.SHA256 != "" || e.Target != "" || e.Dirs != nil || e.Via != "" {
			return l, fmt.Errorf("a %s line has a seq, a path and nothing else", l.Kind)
		}
		switch {
		case l.Kind == kindChanging && l.Left != nil:
			return l, errors.New("a changing line says nothing was left")
		case l.Kind == kindLeft && l.Left == nil:
			return l, errors.New("a left line needs what was left")
		case l.Kind == kindLeft:
			if err := l.Left.check(); err != nil {
				return l, err
			}
		}
		return l, nil
	}
	if l.Left != nil {
		return l, errors.New("a snapshot line says nothing was left")
	}
	return l, checkEntry(l.Entry)
}

// checkEntry checks a snapshot line.
func checkEntry(e Entry) error {
	if e.Via != "" {
		if err := checkRel(e.Via); err != nil {
			return fmt.Errorf("via: %w", err)
		}
	}
	switch e.Kind {
	case KindFile:
		if e.Size < 0 || e.Size > maxSize || !isSHA256(e.SHA256) || e.Target != "" || e.Dirs != nil {
			return errors.New("a file entry needs a size and a SHA-256, and nothing else")
		}
	case KindSymlink:
		if e.Target == "" || strings.IndexByte(e.Target, 0) >= 0 || e.Mode != 0 || e.Size != 0 || e.SHA256 != "" || e.Dirs != nil {
			return errors.New("a symlink entry needs a target, and nothing else")
		}
	case KindAbsent:
		if e.Mode != 0 || e.Size != 0 || e.SHA256 != "" || e.Target != "" {
			return errors.New("an absent entry has no content")
		}
		above := e.Path
		for _, d := range e.Dirs {
			if checkRel(d) != nil || d != filepath.Dir(above) {
				return fmt.Errorf("%q is not the directory above %q", d, above)
			}
			above = d
		}
	default:
		return fmt.Errorf("unknown kind %q", e.Kind)
	}
	return nil
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown fields.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("text after the JSON value")
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// orphans notes the blobs no entry names: saved by a Snapshot that did not
// get as far as its journal line.
func orphans(blobs string, entries []Entry) []string {
	var notes []string
	for _, n := range orphanBlobs(blobs, entries) {
		notes = append(notes, fmt.Sprintf("blob %s is not in the journal: rein stopped while saving a file, before the change it was saved for; ignored", n))
	}
	return notes
}

// orphanBlobs lists the names in blobs that no file entry names.
func orphanBlobs(blobs string, entries []Entry) []string {
	names, err := os.ReadDir(blobs)
	if err != nil {
		return nil
	}
	ids := make(map[string]bool, len(entries))
	for _, e := range entries {
		if e.Kind == KindFile {
			ids[e.ID()] = true
		}
	}
	var out []string
	for _, n := range names {
		if !ids[n.Name()] {
			out = append(out, n.Name())
		}
	}
	return out
}

// Sessions lists the sessions with a store in dir, most recent first. A
// directory that does not exist holds none.
func Sessions(dir string) ([]string, error) {
	list, err := os.ReadDir(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rollback: %w", err)
	}
	type found struct {
		id      string
		created time.Time
	}
	var all []found
	for _, d := range list {
		if !d.IsDir() || session.CheckID(d.Name()) != nil {
			continue
		}
		m, err := readManifest(filepath.Join(dir, d.Name()))
		if err != nil || m.Session != d.Name() {
			continue
		}
		all = append(all, found{d.Name(), m.Created})
	}
	slices.SortFunc(all, func(a, b found) int {
		return cmp.Or(b.created.Compare(a.created), strings.Compare(b.id, a.id))
	})
	ids := make([]string, len(all))
	for i, f := range all {
		ids[i] = f.id
	}
	return ids, nil
}
