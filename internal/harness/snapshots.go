package harness

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/session/rollback"
	"github.com/reinhq/rein/tool/bash"
)

// snapshots saves files for rollback through a per-session store and
// remembers which paths it saved. The zero value keeps nothing.
type snapshots struct {
	dir   string
	store *rollback.Store

	mu    sync.Mutex
	paths []string
	seen  map[string]bool
	// refused counts the calls refused because the store could not be
	// written (rollback.ErrStore: a full or read-only state dir);
	// unsettled, the calls whose result could not be recorded.
	refused, unsettled int
}

// quarantineDir is where run_bash keeps what a command left at a
// protected path it undid: beside the session's rollback snapshots, or
// under the temp dir when the session keeps none.
func quarantineDir(spec Spec, session string) string {
	dir := spec.RollbackDir
	if dir == "" && !spec.NoRollback {
		dir, _ = rollback.Dir()
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, session, "undone")
}

func openSnapshots(spec Spec, session, workdir string) (*snapshots, error) {
	s := &snapshots{seen: map[string]bool{}}
	if spec.NoRollback {
		return s, nil
	}
	dir := spec.RollbackDir
	if dir == "" {
		d, err := rollback.Dir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if err := checkOutside(workdir, "rollback store", dir, "set XDG_STATE_HOME (rein's state dir) to a directory outside it"); err != nil {
		return nil, err
	}
	st, err := rollback.Open(dir, session, workdir)
	if err != nil {
		return nil, err
	}
	s.dir, s.store = dir, st
	return s, nil
}

// Snapshot saves rel, or refuses when this session keeps no snapshots.
func (s *snapshots) Snapshot(rel string) (string, error) {
	id := ""
	if s.store != nil {
		var err error
		if id, err = s.store.Snapshot(rel); err != nil {
			if errors.Is(err, rollback.ErrStore) {
				s.mu.Lock()
				s.refused++
				s.mu.Unlock()
			}
			return "", err
		}
	}
	s.mu.Lock()
	if !s.seen[rel] {
		s.seen[rel] = true
		s.paths = append(s.paths, rel)
	}
	s.mu.Unlock()
	return id, nil
}

// Settle records what a call left at paths (agent's settler); a failure
// is counted for the summary: such a path is restored with a copy kept.
func (s *snapshots) Settle(paths ...string) {
	if s.store == nil {
		return
	}
	if err := s.store.Settle(paths...); err != nil {
		s.mu.Lock()
		s.unsettled++
		s.mu.Unlock()
	}
}

// CheckLinked reports a store whose journal is no longer where it was
// opened (agent's linkChecker).
func (s *snapshots) CheckLinked() error {
	if s.store == nil {
		return nil
	}
	return s.store.CheckLinked()
}

// counts returns the refused and unsettled counts.
func (s *snapshots) counts() (refused, unsettled int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused, s.unsettled
}

func (s *snapshots) changed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func (s *snapshots) close() {
	if s.store != nil {
		_ = s.store.Close()
	}
}

// staging is how run_bash handles a staged command's writes in this
// session: saved in the rollback store before they are applied, and the
// questions (more than the threshold changed or deleted, a mass delete,
// deletions under .git/) put to the session's approver; refused, never
// asked, in bypass mode, without an approver, and in unattended runs
// (whose approver is approve.Deny: nobody answers).
func staging(spec Spec, snaps *snapshots) *bash.Staging {
	_, nobody := spec.Policy.Approver.(approve.Deny)
	st := &bash.Staging{
		AskAbove: spec.Sandbox.StageAskAbove,
		NeverAsk: spec.Policy.Mode == permission.Bypass || spec.Policy.Approver == nil || nobody,
		Snapshot: func(rel string) error { _, err := snaps.Snapshot(rel); return err },
		Settle:   func(rels ...string) error { snaps.Settle(rels...); return nil },
	}
	if a := spec.Policy.Approver; a != nil {
		st.Ask = func(ctx context.Context, q string) (bool, error) {
			return a.Approve(ctx, approve.Request{Tool: bash.Name, Gate: "stage", Reason: q})
		}
	}
	return st
}
