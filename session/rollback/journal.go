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
	j := &Journal{Dir: sdir, Session: sessionID, Workdir: m.Workdir, Created: m.Created}
	data, err := os.ReadFile(filepath.Join(sdir, journalName))
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("rollback: %s: %w", sessionID, err)
	}
	j.Entries, j.Notes, j.Damaged = parseJournal(data)
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
	case m.Version != manifestVersion:
		return m, fmt.Errorf("manifest: version %d; this rein reads version %d", m.Version, manifestVersion)
	case !filepath.IsAbs(m.Workdir) || filepath.Clean(m.Workdir) != m.Workdir || strings.IndexByte(m.Workdir, 0) >= 0:
		return m, fmt.Errorf("manifest: work directory %q is not a clean absolute path", m.Workdir)
	}
	return m, nil
}

// maxSize bounds the size a journal entry may claim.
const maxSize = 1 << 40

// parseJournal reads journal lines: the valid entries, notes on a last line
// cut short, and complaints about damaged lines. It never fails as a whole:
// a bad line spoils only itself.
func parseJournal(data []byte) (entries []Entry, notes, damaged []string) {
	var last uint64
	paths := map[string]bool{}
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			notes = append(notes, fmt.Sprintf("journal line %d is incomplete (%d bytes, no newline): rein stopped while saving a file, before the change it was saved for; ignored", n, len(data)))
			break
		}
		line := data[:i]
		data = data[i+1:]
		e, err := parseEntry(line)
		switch {
		case err != nil:
		case e.Seq <= last:
			err = fmt.Errorf("snapshot %d comes after %d", e.Seq, last)
		case paths[e.Path]:
			err = fmt.Errorf("a second snapshot of %q", e.Path)
		}
		if err != nil {
			damaged = append(damaged, fmt.Sprintf("journal line %d is damaged (%v)", n, err))
			continue
		}
		last, paths[e.Path] = e.Seq, true
		entries = append(entries, e)
	}
	return entries, notes, damaged
}

// parseEntry decodes and checks one journal line.
func parseEntry(line []byte) (Entry, error) {
	var e Entry
	if err := decodeStrict(line, &e); err != nil {
		return e, err
	}
	if e.Seq == 0 {
		return e, errors.New("no seq")
	}
	if err := checkRel(e.Path); err != nil {
		return e, err
	}
	if e.Via != "" {
		if err := checkRel(e.Via); err != nil {
			return e, fmt.Errorf("via: %w", err)
		}
	}
	switch e.Kind {
	case KindFile:
		if e.Size < 0 || e.Size > maxSize || !isSHA256(e.SHA256) || e.Target != "" || e.Dirs != nil {
			return e, errors.New("a file entry needs a size and a SHA-256, and nothing else")
		}
	case KindSymlink:
		if e.Target == "" || strings.IndexByte(e.Target, 0) >= 0 || e.Mode != 0 || e.Size != 0 || e.SHA256 != "" || e.Dirs != nil {
			return e, errors.New("a symlink entry needs a target, and nothing else")
		}
	case KindAbsent:
		if e.Mode != 0 || e.Size != 0 || e.SHA256 != "" || e.Target != "" {
			return e, errors.New("an absent entry has no content")
		}
		above := e.Path
		for _, d := range e.Dirs {
			if checkRel(d) != nil || d != filepath.Dir(above) {
				return e, fmt.Errorf("%q is not the directory above %q", d, above)
			}
			above = d
		}
	default:
		return e, fmt.Errorf("unknown kind %q", e.Kind)
	}
	return e, nil
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
	var notes []string
	for _, n := range names {
		if !ids[n.Name()] {
			notes = append(notes, fmt.Sprintf("blob %s is not in the journal: rein stopped while saving a file, before the change it was saved for; ignored", n.Name()))
		}
	}
	return notes
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
