package harness

import (
	"sync"

	"github.com/reinhq/rein/session/rollback"
)

// snapshots saves files for rollback through a per-session store and
// remembers which paths it saved. The zero value keeps nothing.
type snapshots struct {
	dir   string
	store *rollback.Store

	mu    sync.Mutex
	paths []string
	seen  map[string]bool
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
