package rollback

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Restore puts back the first state of every path the session saved, newest
// snapshot first, and reports on each. See (*Journal).Restore.
func Restore(dir, sessionID string, opts ...RestoreOption) ([]FileReport, error) {
	j, err := Load(dir, sessionID)
	if err != nil {
		return nil, err
	}
	return j.Restore(opts...)
}

// RestoreOption changes what Restore and Plan do.
type RestoreOption func(*restorer)

// Force restores (or deletes) the paths that changed since the session
// left them too, instead of keeping them; what is there is first copied
// into the store's replaced/ directory, and each report's Copy says where.
func Force() RestoreOption { return func(r *restorer) { r.force = true } }

// Restore puts back the first state of every path in the journal, newest
// snapshot first, and reports on each path (and each damaged journal line,
// as Failed). It takes the session's lock, so it refuses (ErrBusy) while the
// session still runs, and reads the journal again under it.
//
// A file is written to a temporary file in its directory, given its mode,
// synced and renamed over the path, then read back and checked against the
// SHA-256 and mode in the journal. A path the agent created is deleted, and
// the directories created for it with it when they are empty. A path
// already in its first state is left alone, so a second Restore reports
// every path Unchanged. Everything goes through an os.Root on the work
// directory named in the manifest.
//
// The error is for a restore that could not start: the lock, the store,
// the work directory. What happened to each path is in the reports.
func (j *Journal) Restore(opts ...RestoreOption) ([]FileReport, error) {
	lock, err := lockPatiently(filepath.Join(j.Dir, lockName))
	if errors.Is(err, ErrBusy) {
		return nil, fmt.Errorf("%w: session %s is still running, or being rolled back; wait for it to end", ErrBusy, j.Session)
	}
	if err != nil {
		return nil, fmt.Errorf("rollback: %w", err)
	}
	defer lock.Close()
	fresh, err := Load(filepath.Dir(j.Dir), j.Session)
	if err != nil {
		return nil, err
	}
	*j = *fresh
	return j.run(false, opts)
}

// lockPatiently takes the session's lock, trying for a moment when it is
// held: a process starting a child holds a copy of every open file until
// the child execs, and with it the lock of a store just closed.
func lockPatiently(name string) (*os.File, error) {
	for range 50 {
		f, err := lockToRestore(name)
		if !errors.Is(err, ErrBusy) {
			return f, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return lockToRestore(name)
}

// Plan reports what Restore would do to each path, newest snapshot first,
// and changes nothing: Restored and Deleted mean it would restore or delete.
// A snapshot whose blob is missing or damaged is Failed.
func (j *Journal) Plan(opts ...RestoreOption) ([]FileReport, error) {
	return j.run(true, opts)
}

func (j *Journal) run(dry bool, opts []RestoreOption) ([]FileReport, error) {
	reports := make([]FileReport, 0, len(j.Damaged)+len(j.Entries))
	for _, d := range j.Damaged {
		reports = append(reports, FileReport{Path: journalName, Action: Failed, Err: d})
	}
	if len(j.Entries) == 0 {
		return reports, nil
	}
	root, err := os.OpenRoot(j.Workdir)
	if err != nil {
		return nil, fmt.Errorf("rollback: the work directory of session %s: %w", j.Session, err)
	}
	defer root.Close()
	r := restorer{root: root, blobs: filepath.Join(j.Dir, blobsName), session: j.Session, dry: dry, old: j.Version == oldVersion,
		replaced: filepath.Join(j.Dir, replacedName, time.Now().UTC().Format("20060102T150405.000000000Z"))}
	for _, o := range opts {
		o(&r)
	}
	// Strays first: a directory to be removed must be empty.
	reports = append(reports, r.strays(j.Entries)...)
	for i := len(j.Entries) - 1; i >= 0; i-- {
		reports = append(reports, r.entry(j.Entries[i]))
	}
	return reports, nil
}

// restorer restores entries under one work directory.
type restorer struct {
	root     *os.Root
	blobs    string
	session  string
	dry      bool
	force    bool   // restore what changed since the session too, after copying it
	old      bool   // a version 1 store: what the agent left is not recorded
	replaced string // where this restore copies what it overwrites
}

// Why a path is kept, or copied before it is restored.
const (
	whyChanged = "changed since the session wrote it"
	whyOld     = "rein cannot tell whether it changed since the session: an older rein saved it without recording what the agent left"
	whyStopped = "rein stopped while the agent was changing it, so what is there may be the agent's unfinished change or a later edit"
	whyDir     = "it is a directory now; rein does not remove or replace directories"
	whyNoCopy  = "what is there could not be copied aside first, so it was left alone"
)

// entry restores one path, or keeps it when what is there is not what
// the session left: an edit made after the session survives a rollback.
func (r restorer) entry(e Entry) FileReport {
	rep := FileReport{Path: e.Path}
	fail := func(err error) FileReport {
		rep.Action, rep.Err = Failed, err.Error()
		return rep
	}
	first, err := r.inFirstState(e)
	if err != nil {
		return fail(explain(err))
	}
	if first {
		if e.Kind == KindAbsent && !r.dry {
			r.removeDirs(e.Dirs)
		}
		rep.Action = Unchanged
		return rep
	}
	cur, err := r.root.Lstat(e.Path)
	switch {
	case gone(err):
		// Nothing there: restoring it loses nothing.
		return r.put(e, rep)
	case err != nil:
		return fail(explain(err))
	case cur.IsDir():
		rep.Action, rep.Reason = Kept, whyDir
		return rep
	}
	left, err := r.holds(e.Path, e.Left)
	if err != nil {
		return fail(explain(err))
	}
	switch {
	case left:
		return r.put(e, rep) // what the session left: the agent's work, undone
	case r.old && e.Left == nil:
		rep.Reason = whyOld
	case e.Changing:
		// rein was stopped in the middle of a call (a kill, a crash): what
		// is there is most likely the agent's, so it is restored, but a
		// copy is kept in case someone edited it since.
		rep.Reason = whyStopped
		return r.copyAndPut(e, rep)
	default:
		rep.Reason = whyChanged
	}
	if !r.force {
		rep.Action, rep.Forcible = Kept, true
		return rep
	}
	return r.copyAndPut(e, rep)
}

// copyAndPut copies what is at e.Path into the store, then restores it.
func (r restorer) copyAndPut(e Entry, rep FileReport) FileReport {
	dst := filepath.Join(r.replaced, e.Path)
	rep.Copy = dst
	if !r.dry {
		if err := r.copyAside(e.Path, dst); err != nil {
			rep.Action, rep.Copy = Kept, ""
			rep.Reason = fmt.Sprintf("%s (%s): %v", whyNoCopy, rep.Reason, err)
			return rep
		}
	}
	return r.put(e, rep)
}

// put writes e's first state back.
func (r restorer) put(e Entry, rep FileReport) FileReport {
	var err error
	switch e.Kind {
	case KindFile:
		rep.Action, err = r.file(e)
	case KindSymlink:
		rep.Action, err = r.symlink(e)
	case KindAbsent:
		rep.Action, err = r.absent(e)
	}
	if err != nil {
		rep.Action, rep.Err = Failed, err.Error()
	}
	return rep
}

// inFirstState reports whether e.Path holds what it held before the
// session: the same bytes and mode, the same link, or nothing.
func (r restorer) inFirstState(e Entry) (bool, error) {
	cur, err := r.root.Lstat(e.Path)
	switch {
	case gone(err):
		return e.Kind == KindAbsent, nil
	case err != nil:
		return false, err
	}
	switch e.Kind {
	case KindFile:
		if !cur.Mode().IsRegular() || cur.Size() != e.Size || modeOf(cur.Mode()) != e.Mode {
			return false, nil
		}
		sum, err := hashIn(r.root, e.Path, e.Size)
		return err == nil && sum == e.SHA256, err
	case KindSymlink:
		if cur.Mode()&iofs.ModeSymlink == 0 {
			return false, nil
		}
		t, err := r.root.Readlink(e.Path)
		return err == nil && t == e.Target, err
	}
	return false, nil
}

// holds reports whether rel holds what st says (false for no st): the
// same kind, and the same bytes or link target.
func (r restorer) holds(rel string, st *State) (bool, error) {
	if st == nil {
		return false, nil
	}
	cur, err := r.root.Lstat(rel)
	switch {
	case gone(err):
		return st.Kind == KindAbsent, nil
	case err != nil:
		return false, err
	case cur.Mode()&iofs.ModeSymlink != 0:
		if st.Kind != KindSymlink {
			return false, nil
		}
		t, err := r.root.Readlink(rel)
		return err == nil && t == st.Target, err
	case !cur.Mode().IsRegular() || st.Kind != KindFile || cur.Size() != st.Size:
		return false, nil
	}
	sum, err := hashIn(r.root, rel, st.Size)
	return err == nil && sum == st.SHA256, err
}

// copyAside copies what is at rel (a regular file or a link) to dst, in
// the store, synced, before a restore overwrites or deletes it.
func (r restorer) copyAside(rel, dst string) error {
	info, err := r.root.Lstat(rel)
	if err != nil {
		return explain(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	if info.Mode()&iofs.ModeSymlink != 0 {
		target, err := r.root.Readlink(rel)
		if err != nil {
			return explain(err)
		}
		if err := os.Symlink(target, dst); err != nil {
			return err
		}
		return syncDir(filepath.Dir(dst))
	}
	src, err := r.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return explain(err)
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil || !fi.Mode().IsRegular() {
		return errors.New("it is not a regular file")
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, src)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// file restores a regular file from its blob.
func (r restorer) file(e Entry) (string, error) {
	cur, err := r.root.Lstat(e.Path)
	switch {
	case err == nil && cur.Mode().IsRegular():
		if cur.Size() == e.Size && modeOf(cur.Mode()) == e.Mode {
			sum, err := hashIn(r.root, e.Path, e.Size)
			if err != nil {
				return "", explain(err)
			}
			if sum == e.SHA256 {
				return Unchanged, nil
			}
		}
	case err == nil && cur.IsDir():
		return "", errors.New("it is a directory now; rein does not replace directories")
	case err == nil, gone(err):
		// A link or nothing where the file was: the file replaces it.
	default:
		return "", explain(err)
	}
	if r.dry {
		return Restored, r.checkBlob(e)
	}
	dir, name, err := r.openParent(e.Path)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	blob, err := os.Open(filepath.Join(r.blobs, e.ID()))
	if err != nil {
		return "", fmt.Errorf("its snapshot %s cannot be read: %w", e.ID(), err)
	}
	defer blob.Close()
	tmp, err := r.tempName(dir, e)
	if err != nil {
		return "", err
	}
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", explain(err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(blob, e.Size+1))
	if err == nil && (n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256) {
		err = fmt.Errorf("its snapshot %s is damaged: %d bytes with another SHA-256 than the %d bytes saved; the file was not touched", e.ID(), n, e.Size)
	}
	if err == nil {
		err = f.Chmod(e.Mode.FileMode())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Rename(tmp, name)
	}
	if err != nil {
		dir.Remove(tmp)
		return "", explain(err)
	}
	if err := syncRoot(dir); err != nil {
		return "", err
	}
	// Verify: read back what is now at the path.
	info, err := dir.Lstat(name)
	if err != nil {
		return "", fmt.Errorf("written, but it cannot be checked: %w", explain(err))
	}
	sum, err := hashIn(dir, name, e.Size)
	switch {
	case err != nil:
		return "", fmt.Errorf("written, but it cannot be checked: %w", explain(err))
	case sum != e.SHA256 || info.Size() != e.Size:
		return "", errors.New("written, but what is there now does not match the SHA-256 of its snapshot")
	case modeOf(info.Mode()) != e.Mode:
		return "", fmt.Errorf("written, but its mode is %04o, not %04o", uint32(modeOf(info.Mode())), uint32(e.Mode))
	}
	return Restored, nil
}

// symlink restores a symbolic link with its target.
func (r restorer) symlink(e Entry) (string, error) {
	cur, err := r.root.Lstat(e.Path)
	switch {
	case err == nil && cur.Mode()&iofs.ModeSymlink != 0:
		if t, err := r.root.Readlink(e.Path); err == nil && t == e.Target {
			return Unchanged, nil
		}
	case err == nil && cur.IsDir():
		return "", errors.New("it is a directory now; rein does not replace directories")
	case err == nil, gone(err):
	default:
		return "", explain(err)
	}
	if r.dry {
		return Restored, nil
	}
	dir, name, err := r.openParent(e.Path)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	tmp, err := r.tempName(dir, e)
	if err != nil {
		return "", err
	}
	if err := dir.Symlink(e.Target, tmp); err != nil {
		return "", explain(err)
	}
	if err := dir.Rename(tmp, name); err != nil {
		dir.Remove(tmp)
		return "", explain(err)
	}
	if err := syncRoot(dir); err != nil {
		return "", err
	}
	if t, err := dir.Readlink(name); err != nil || t != e.Target {
		return "", fmt.Errorf("written, but the link does not lead to %q", e.Target)
	}
	return Restored, nil
}

// absent deletes what the agent created, and the directories made for it
// when they are empty.
func (r restorer) absent(e Entry) (string, error) {
	cur, err := r.root.Lstat(e.Path)
	switch {
	case gone(err):
		if !r.dry {
			r.removeDirs(e.Dirs)
		}
		return Unchanged, nil
	case err != nil:
		return "", explain(err)
	case cur.IsDir():
		return "", errors.New("the agent's session created it and it is a directory now; rein does not remove directories")
	}
	if r.dry {
		return Deleted, nil
	}
	if err := r.root.Remove(e.Path); err != nil && !gone(err) {
		return "", explain(err)
	}
	if _, err := r.root.Lstat(e.Path); !gone(err) {
		return "", errors.New("removed, but something is there again")
	}
	r.removeDirs(e.Dirs)
	return Deleted, nil
}

// tempName returns the name of e's temporary file in dir, after removing
// what a restore that was killed may have left there under that name. The
// name is the same in every restore of the session, so a second restore
// cleans up after the first; what is there is removed, never followed.
func (r restorer) tempName(dir *os.Root, e Entry) (string, error) {
	tmp := ".rein-rollback-" + r.session + "-" + e.ID() + ".tmp"
	if err := dir.Remove(tmp); err != nil && !gone(err) {
		return "", fmt.Errorf("cannot remove %s, left by an earlier restore: %w", tmp, explain(err))
	}
	return tmp, nil
}

// strays deletes the temporary files that rein's file tools left in the
// directories of the entries when they were killed while writing (they
// write a file as ".rein-" + 16 base32 characters + ".tmp" and rename it
// over the path). Only regular files or links of exactly that name go.
func (r restorer) strays(entries []Entry) []FileReport {
	var reports []FileReport
	seen := map[string]bool{}
	for _, e := range entries {
		dir := filepath.Dir(e.Path)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		d, err := r.root.Open(dir)
		if err != nil {
			continue
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			if !isToolTemp(n) {
				continue
			}
			p := filepath.Join(dir, n)
			if info, err := r.root.Lstat(p); err != nil || info.IsDir() {
				continue
			}
			rep := FileReport{Path: p, Action: Deleted}
			if !r.dry {
				if err := r.root.Remove(p); err != nil && !gone(err) {
					rep.Action, rep.Err = Failed, explain(err).Error()
				}
			}
			reports = append(reports, rep)
		}
	}
	return reports
}

// isToolTemp reports whether name is a temporary file of rein's file tools.
func isToolTemp(name string) bool {
	mid, ok := strings.CutPrefix(name, ".rein-")
	if !ok {
		return false
	}
	if mid, ok = strings.CutSuffix(mid, ".tmp"); !ok || len(mid) != 16 {
		return false
	}
	for _, c := range []byte(mid) {
		if (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// removeDirs removes dirs, deepest first, while they are empty directories.
func (r restorer) removeDirs(dirs []string) {
	for _, d := range dirs {
		info, err := r.root.Lstat(d)
		if err != nil || !info.IsDir() || r.root.Remove(d) != nil {
			return
		}
	}
}

// openParent opens rel's directory, creating it if it is gone, and returns
// it with rel's last name.
func (r restorer) openParent(rel string) (*os.Root, string, error) {
	parent, name := filepath.Dir(rel), filepath.Base(rel)
	if parent != "." {
		if err := r.root.MkdirAll(parent, 0o755); err != nil {
			return nil, "", explain(err)
		}
	}
	dir, err := r.root.OpenRoot(parent)
	if err != nil {
		return nil, "", explain(err)
	}
	return dir, name, nil
}

// checkBlob checks that e's blob holds what the journal says.
func (r restorer) checkBlob(e Entry) error {
	f, err := os.Open(filepath.Join(r.blobs, e.ID()))
	if err != nil {
		return fmt.Errorf("its snapshot %s cannot be read: %w", e.ID(), err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, e.Size+1))
	if err != nil {
		return fmt.Errorf("its snapshot %s cannot be read: %w", e.ID(), err)
	}
	if n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
		return fmt.Errorf("its snapshot %s is damaged: %d bytes with another SHA-256 than the %d bytes saved", e.ID(), n, e.Size)
	}
	return nil
}

// hashIn returns the SHA-256 of the regular file name in root, reading at
// most limit+1 bytes (a longer file differs from the snapshot anyway).
func hashIn(root *os.Root, name string, limit int64) (string, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", errors.New("it is not a regular file")
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, limit+1)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// syncRoot makes the entries of a root's directory durable.
func syncRoot(dir *os.Root) error {
	d, err := dir.Open(".")
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("written, but the directory could not be synced: %w", err)
	}
	return nil
}

// gone reports whether err says the path does not exist (or a directory
// above it is a file).
func gone(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// explain turns a root operation's error into a reason for a report (whose
// Err is text: nothing wraps).
func explain(err error) error {
	switch {
	case escapes(err):
		return errors.New("it leads outside the work directory through a symbolic link; nothing outside was touched")
	case errors.Is(err, iofs.ErrPermission):
		return errors.New("permission denied")
	case errors.Is(err, syscall.ELOOP):
		return errors.New("too many levels of symbolic links")
	}
	for {
		pe, ok := err.(*iofs.PathError)
		if !ok {
			return err
		}
		err = pe.Err
	}
}
