package rollback

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/linkcheck"
	"github.com/reinhq/rein/session"
)

// Store saves the first state of every path a session's tools change. It is
// safe for concurrent use. While it is open it holds the session's lock, so
// a rollback of a running session is refused.
type Store struct {
	mu       sync.Mutex
	dir      string   // the session's store directory
	root     *os.Root // the work directory
	journal  *os.File
	lock     *os.File
	max      int64
	seq      uint64
	seen     map[string]string   // path → id
	group    map[string][]string // path → the saved paths a call on it changes: itself, and where its link leads
	inflight map[string]bool     // saved paths a call may be changing: their last line is not a left line
	err      error               // sticky: once the journal may be torn, nothing more is saved
}

// Option configures a Store.
type Option func(*Store)

// WithMaxFileSize sets the largest file Snapshot saves (default
// DefaultMaxFileSize); a larger one is refused with ErrTooLarge.
func WithMaxFileSize(n int64) Option {
	return func(s *Store) {
		if n > 0 {
			s.max = n
		}
	}
}

// Open opens the store of session in dir/SESSION for the files of workdir,
// creating it (mode 0700, with a manifest that records workdir's absolute
// path) when it does not exist. An existing store — a session resumed
// after an interruption — is opened to go on: paths it saved keep their
// first state, and a journal line cut short by the interruption is
// dropped. Open refuses a store that another process has open (ErrBusy),
// one made for another work directory, and one whose journal is damaged.
func Open(dir, sessionID, workdir string, opts ...Option) (*Store, error) {
	if err := session.CheckID(sessionID); err != nil {
		return nil, fmt.Errorf("rollback: %w", err)
	}
	abs, err := filepath.Abs(workdir)
	if err != nil {
		return nil, fmt.Errorf("rollback: work directory: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("rollback: work directory: %w", err)
	}
	s := &Store{dir: filepath.Join(dir, sessionID), root: root, max: DefaultMaxFileSize,
		seen: map[string]string{}, group: map[string][]string{}, inflight: map[string]bool{}}
	for _, o := range opts {
		o(s)
	}
	if err := s.open(dir, manifest{Version: manifestVersion, Session: sessionID, Workdir: abs, Created: time.Now().UTC()}); err != nil {
		s.closeAll()
		return nil, fmt.Errorf("rollback: %w", err)
	}
	return s, nil
}

// open makes or reopens the store's directory, lock, blob directory,
// journal and manifest, and syncs what it made.
func (s *Store) open(dir string, m manifest) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, iofs.ErrExist) {
		return fmt.Errorf("create %s: %w", s.dir, err)
	}
	lock, err := lockFile(filepath.Join(s.dir, lockName))
	if err != nil {
		if errors.Is(err, ErrBusy) {
			return fmt.Errorf("%w: session %s is open in another process", ErrBusy, m.Session)
		}
		return err
	}
	s.lock = lock
	if err := os.Mkdir(filepath.Join(s.dir, blobsName), 0o700); err != nil && !errors.Is(err, iofs.ErrExist) {
		return fmt.Errorf("create the blob directory: %w", err)
	}
	old, err := readManifest(s.dir)
	switch {
	case err == nil && old.Session != m.Session:
		return fmt.Errorf("%s: the manifest names session %q", s.dir, old.Session)
	case err == nil && old.Workdir != m.Workdir:
		return fmt.Errorf("session %s saved the files of %s, not of %s", m.Session, old.Workdir, m.Workdir)
	case err == nil:
		return s.resume()
	case !errors.Is(err, iofs.ErrNotExist):
		return err
	}
	// A new store (or one whose creation was cut off before its manifest).
	j, err := os.OpenFile(filepath.Join(s.dir, journalName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("create the journal: %w", err)
	}
	s.journal = j
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	// The manifest comes last: a store without one is not listed or restored.
	if err := writeSynced(filepath.Join(s.dir, manifestName), append(data, '\n')); err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	return syncDir(dir)
}

// resume reads the journal of an existing store, so that what it saved
// is not saved again, and drops a last line that was cut short.
func (s *Store) resume() error {
	name := filepath.Join(s.dir, journalName)
	data, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	p := parseJournal(data)
	if len(p.damaged) > 0 {
		return fmt.Errorf("the journal of %s is damaged (%s); it cannot be added to", s.dir, p.damaged[0])
	}
	j, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open the journal: %w", err)
	}
	s.journal = j
	if whole := int64(bytes.LastIndexByte(data, '\n') + 1); whole < int64(len(data)) {
		if err := j.Truncate(whole); err != nil {
			return fmt.Errorf("drop the cut journal line: %w", err)
		}
		if err := j.Sync(); err != nil {
			return fmt.Errorf("sync the journal: %w", err)
		}
	}
	for _, e := range p.entries {
		s.seen[e.Path] = e.ID()
		s.inflight[e.Path] = e.Changing
		if e.Via != "" {
			s.addGroup(e.Via, e.Path)
		}
	}
	s.seq = p.last
	// A blob no line names is from a save cut short; its number may be
	// given to a line again, so it goes.
	for _, n := range orphanBlobs(filepath.Join(s.dir, blobsName), p.entries) {
		if err := os.Remove(filepath.Join(s.dir, blobsName, n)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("remove the blob of a save cut short: %w", err)
		}
	}
	return nil
}

// addGroup notes that a call changing rel changes p too (a link and the
// file it leads to).
func (s *Store) addGroup(rel, p string) {
	if !slices.Contains(s.group[rel], p) {
		s.group[rel] = append(s.group[rel], p)
	}
}

// changedBy returns the saved paths a call naming rel may change.
func (s *Store) changedBy(rel string) []string {
	paths := []string{rel}
	for _, p := range s.group[rel] {
		if p != rel && s.seen[p] != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// Snapshot saves the current state of rel, a clean path relative to the
// work directory, before a tool changes it, and returns the snapshot's id.
// A path saved earlier in the session is not saved again (its first state
// is what a rollback restores); its id is returned. The journal line and
// the blob are on disk before Snapshot returns.
//
// A symbolic link is saved as a link (its target, not followed); when it
// leads to a path inside the work directory, that path is saved too, since
// a tool writing to the link writes there. An error means the state could
// not be saved and the tool must not run: ErrTooLarge, ErrUnsupported,
// ErrOutside, ErrPath, or an I/O error.
func (s *Store) Snapshot(rel string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return "", s.err
	}
	if err := checkRel(rel); err != nil {
		return "", err
	}
	id, err := s.snapshot(rel, "")
	if err != nil {
		return "", err
	}
	// A path saved earlier gets a line saying a call is about to change
	// it again: until the call's left line, what is there may be the
	// agent's half-made change, not the user's (see Settle).
	var lines []line
	for _, p := range s.changedBy(rel) {
		if !s.inflight[p] {
			lines = append(lines, line{Entry: Entry{Seq: s.seq + uint64(len(lines)) + 1, Path: p, Kind: kindChanging}})
		}
	}
	if err := s.append(lines...); err != nil {
		return "", err
	}
	for _, l := range lines {
		s.inflight[l.Path] = true
	}
	s.seq += uint64(len(lines))
	return id, nil
}

// Settle records what a call left at the paths it named (each as given to
// Snapshot before the call ran): the kind of each, and the size and
// SHA-256 of a file or the target of a link, with one sync. The loop calls
// it after the tool ran. A rollback restores a path only while it still
// holds what the last call left, so that an edit made after the session is
// kept. A path that cannot be read is left unrecorded, and a rollback
// treats it as changed while a call ran.
func (s *Store) Settle(rels ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	var lines []line
	var errs []error
	done := map[string]bool{}
	for _, rel := range rels {
		if s.seen[rel] == "" {
			continue
		}
		for _, p := range s.changedBy(rel) {
			if done[p] {
				continue
			}
			done[p] = true
			st, err := s.state(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			lines = append(lines, line{Entry: Entry{Seq: s.seq + uint64(len(lines)) + 1, Path: p, Kind: kindLeft}, Left: &st})
		}
	}
	if err := s.append(lines...); err != nil {
		return err
	}
	for _, l := range lines {
		s.inflight[l.Path] = false
	}
	s.seq += uint64(len(lines))
	return errors.Join(errs...)
}

// state reads what is at rel now.
func (s *Store) state(rel string) (State, error) {
	return stateIn(s.root, rel)
}

// stateIn reads what is at rel in root: nothing, a link, or a regular
// file with its size and SHA-256.
func stateIn(root *os.Root, rel string) (State, error) {
	info, err := root.Lstat(rel)
	switch {
	case errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return State{Kind: KindAbsent}, nil
	case err != nil:
		return State{}, fmt.Errorf("read what the call left at %s: %w", rel, err)
	case info.Mode()&iofs.ModeSymlink != 0:
		target, err := root.Readlink(rel)
		if err != nil {
			return State{}, fmt.Errorf("read what the call left at %s: %w", rel, err)
		}
		return State{Kind: KindSymlink, Target: target}, nil
	case !info.Mode().IsRegular():
		return State{}, fmt.Errorf("%s is not a regular file (%s)", rel, info.Mode().Type())
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return State{}, fmt.Errorf("read what the call left at %s: %w", rel, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return State{}, fmt.Errorf("%s changed while rein read it", rel)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return State{}, fmt.Errorf("read what the call left at %s: %w", rel, err)
	}
	return State{Kind: KindFile, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// snapshot saves rel unless it was saved already.
func (s *Store) snapshot(rel, via string) (string, error) {
	if id, ok := s.seen[rel]; ok {
		return id, nil
	}
	e := Entry{Seq: s.seq + 1, Path: rel, Via: via}
	info, err := s.root.Lstat(rel)
	switch {
	case errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		e.Kind, e.Dirs = KindAbsent, s.missingDirs(rel)
	case err != nil:
		return "", pathErr(rel, err)
	case info.Mode()&iofs.ModeSymlink != 0:
		// The path it leads to is saved first, so that a failure there
		// leaves nothing recorded and the next call tries again.
		if real, ok := s.resolve(rel); ok && real != rel && via == "" {
			_, err := s.snapshot(real, rel)
			if err != nil && !errors.Is(err, ErrUnsupported) {
				return "", err
			}
			if err == nil {
				s.addGroup(rel, real)
			}
			e.Seq = s.seq + 1
		}
		target, err := s.root.Readlink(rel)
		if err != nil {
			return "", pathErr(rel, err)
		}
		e.Kind, e.Target = KindSymlink, target
	case info.Mode().IsRegular():
		if info.Size() > s.max {
			return "", fmt.Errorf("%w: %s is %d bytes, more than the %d bytes rein saves to undo a change, so rein will not change it; leave it as it is or ask the user", ErrTooLarge, rel, info.Size(), s.max)
		}
		if err := s.saveBlob(&e, info); err != nil {
			return "", err
		}
	case info.IsDir():
		return "", fmt.Errorf("%w: %s is a directory", ErrUnsupported, rel)
	default:
		return "", fmt.Errorf("%w: %s is not a regular file (%s)", ErrUnsupported, rel, info.Mode().Type())
	}
	if err := s.append(line{Entry: e}); err != nil {
		return "", err
	}
	s.seq = e.Seq
	s.seen[rel] = e.ID()
	s.inflight[rel] = true // until its call's left line
	return e.ID(), nil
}

// saveBlob copies the regular file e.Path into the blob e.ID(), synced,
// and fills in its mode, size and SHA-256.
func (s *Store) saveBlob(e *Entry, info iofs.FileInfo) error {
	f, err := s.root.OpenFile(e.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return pathErr(e.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return pathErr(e.Path, err)
	}
	if !fi.Mode().IsRegular() || !os.SameFile(fi, info) {
		return fmt.Errorf("%s changed while rein was saving it; try again", e.Path)
	}
	// The blob is written in place: until its journal line exists it is
	// nobody's, so a half-written one is only a stray file.
	blobs := filepath.Join(s.dir, blobsName)
	name := filepath.Join(blobs, e.ID())
	b, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("save %s: %w: %w", e.Path, ErrStore, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(b, h), io.LimitReader(f, s.max+1))
	if err == nil && n > s.max {
		err = fmt.Errorf("%w: %s grew past the %d bytes rein saves to undo a change while it was being saved", ErrTooLarge, e.Path, s.max)
	}
	if err == nil {
		err = b.Sync()
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(blobs)
	}
	if err != nil {
		os.Remove(name)
		if errors.Is(err, ErrTooLarge) {
			return err
		}
		return fmt.Errorf("save %s: %w: %w", e.Path, ErrStore, err)
	}
	e.Kind, e.Mode, e.Size, e.SHA256 = KindFile, modeOf(fi.Mode()), n, hex.EncodeToString(h.Sum(nil))
	return nil
}

// append writes lines to the journal and syncs it. A failure may have
// left part of a line, after which no line could be read back reliably,
// so the store refuses every later Snapshot and Settle.
func (s *Store) append(lines ...line) error {
	if len(lines) == 0 {
		return nil
	}
	var buf []byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("rollback: encode journal line %d: %w", l.Seq, err)
		}
		buf = append(append(buf, b...), '\n')
	}
	if _, err := s.journal.Write(buf); err != nil {
		s.err = fmt.Errorf("rollback: %w: write the journal: %w", ErrStore, err)
		return s.err
	}
	if err := s.journal.Sync(); err != nil {
		s.err = fmt.Errorf("rollback: %w: sync the journal: %w", ErrStore, err)
		return s.err
	}
	return nil
}

// missingDirs lists the directories above rel that do not exist, deepest
// first: those a tool creating rel would create.
func (s *Store) missingDirs(rel string) []string {
	var dirs []string
	for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
		if _, err := s.root.Lstat(d); !errors.Is(err, iofs.ErrNotExist) {
			break
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// maxLinks bounds the symbolic links resolve follows, as the kernel does.
const maxLinks = 40

// resolve returns the path rel leads to inside the work directory, with
// every symbolic link followed, the way the os.Root would follow it; false
// when it leads out, through an absolute link, or in a loop. Components
// that do not exist are kept as they are.
func (s *Store) resolve(rel string) (string, bool) {
	todo := strings.Split(filepath.ToSlash(rel), "/")
	var done []string
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", false
			}
			done = done[:len(done)-1]
			continue
		}
		p := path.Join(append(done, c)...)
		info, err := s.root.Lstat(filepath.FromSlash(p))
		if errors.Is(err, iofs.ErrNotExist) {
			done = append(done, c)
			continue
		}
		if err != nil {
			return "", false
		}
		if info.Mode()&iofs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if links++; links > maxLinks {
			return "", false
		}
		target, err := s.root.Readlink(filepath.FromSlash(p))
		if err != nil || target == "" || filepath.IsAbs(target) || strings.IndexByte(target, 0) >= 0 {
			return "", false
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	if len(done) == 0 {
		return "", false
	}
	return filepath.FromSlash(path.Join(done...)), true
}

// CheckLinked reports an error when the journal is no longer linked at
// its path — the state directory deleted, the store renamed away and
// replaced — so that the caller stops instead of saving snapshots nobody
// will find.
func (s *Store) CheckLinked() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal == nil {
		return nil
	}
	if err := linkcheck.Check(s.journal, filepath.Join(s.dir, journalName)); err != nil {
		return fmt.Errorf("rollback journal: %w; rein stops, as the files it changed next could not be rolled back", err)
	}
	return nil
}

// Close closes the journal and the work directory and releases the
// session's lock. Snapshot fails after it.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(s.err, ErrClosed) {
		return nil
	}
	s.err = ErrClosed
	return s.closeAll()
}

func (s *Store) closeAll() error {
	var errs []error
	if s.journal != nil {
		errs = append(errs, s.journal.Close())
	}
	if s.root != nil {
		errs = append(errs, s.root.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}

// checkRel refuses what is not a clean, local path naming something below
// the work directory.
func checkRel(rel string) error {
	if rel == "" || rel == "." || !filepath.IsLocal(rel) || filepath.Clean(rel) != rel || strings.IndexByte(rel, 0) >= 0 {
		return fmt.Errorf("%w: %q", ErrPath, rel)
	}
	return nil
}

// pathErr explains an error of a root operation on rel.
func pathErr(rel string, err error) error {
	if escapes(err) {
		return fmt.Errorf("%s leads %w through a symbolic link", rel, ErrOutside)
	}
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("%s: too many levels of symbolic links", rel)
	}
	return fmt.Errorf("save %s: %w", rel, err)
}

// escapes reports whether err is os.Root's refusal of a path that leads out
// of the root. The os package does not export that error, so its text is
// compared.
func escapes(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// writeSynced writes data to a new file name through a temporary file,
// synced and renamed into place.
func writeSynced(name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
