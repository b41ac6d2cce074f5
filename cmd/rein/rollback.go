package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/termsafe"
	sessionid "github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/rollback"
)

type rollbackCmd struct {
	Session  string `arg:"" help:"The session: its id (as in the name of its audit log, SESSION.jsonl), a unique prefix of one, or the log's path."`
	StateDir string `placeholder:"DIR" help:"rein's state directory; the snapshots are in DIR/rollback (default $XDG_STATE_HOME/rein, else ~/.local/state/rein)."`
	DryRun   bool   `help:"Show what would be restored, deleted or kept, and change nothing."`
	Force    bool   `help:"Also restore the files that changed since the session left them (kept otherwise), after copying what is there into the store."`
}

// maxListed is how many known sessions an unknown-session error lists.
const maxListed = 10

func (c *rollbackCmd) Run(e env) error {
	id := c.Session
	if strings.HasSuffix(id, ".jsonl") { // the audit log's path
		id = strings.TrimSuffix(filepath.Base(id), ".jsonl")
	}
	if err := sessionid.CheckID(id); err != nil {
		return usagef("%v: give the session id from the audit log's name, e.g. rein rollback 20261202T140501Z-3fa9c2d1", err)
	}
	dir, err := c.dir()
	if err != nil {
		return err
	}
	if !strings.HasSuffix(c.Session, ".jsonl") {
		if id, err = rollbackPrefix(dir, id); err != nil {
			return err
		}
	}
	j, err := rollback.Load(dir, id)
	if errors.Is(err, rollback.ErrUnknownSession) {
		return unknownSession(e, dir, id)
	}
	if err != nil {
		return err
	}
	var opts []rollback.RestoreOption
	if c.Force {
		opts = append(opts, rollback.Force())
	}
	var reports []rollback.FileReport
	if c.DryRun {
		reports, err = j.Plan(opts...)
	} else {
		reports, err = j.Restore(opts...)
	}
	for _, n := range j.Notes {
		fmt.Fprintf(e.stderr, "rein: note: %s\n", termsafe.Line(n))
	}
	if err != nil {
		return err
	}
	if len(reports) == 0 {
		fmt.Fprintf(e.stdout, "nothing to roll back: session %s changed no files\n", termsafe.Line(id))
		return nil
	}
	failed, kept, forcible := 0, 0, 0
	for _, r := range reports {
		switch r.Action {
		case rollback.Failed:
			failed++
		case rollback.Kept:
			kept++
			if r.Forcible {
				forcible++
			}
		}
		fmt.Fprintln(e.stdout, termsafe.Line(reportLine(r, c.DryRun)))
	}
	if kept > 0 {
		fmt.Fprintf(e.stderr, "rein: %d path(s) kept: they changed since the session left them", kept)
		if forcible > 0 {
			fmt.Fprintf(e.stderr, "; rein rollback --force %s restores them, keeping a copy of what is there", termsafe.Line(id))
		}
		fmt.Fprintln(e.stderr)
	}
	if failed > 0 {
		fmt.Fprintf(e.stderr, "rein: %d of %d path(s) could not be restored\n", failed, len(reports))
		return exitCode(exitError)
	}
	if kept > 0 {
		return exitCode(exitStopped) // held back by the guard that keeps later edits
	}
	return nil
}

// rollbackPrefix returns the session whose snapshots id names: itself
// when a store has that id or none starts with it, else the one store
// whose id starts with it. A prefix of several is a usage error that
// lists them.
func rollbackPrefix(dir, id string) (string, error) {
	known, err := rollback.Sessions(dir)
	if err != nil || slices.Contains(known, id) {
		return id, nil // Load says what is wrong
	}
	var matches []string
	for _, k := range known {
		if strings.HasPrefix(k, id) {
			matches = append(matches, k)
		}
	}
	slices.Sort(matches)
	switch len(matches) {
	case 0:
		return id, nil // unknownSession lists the known ones
	case 1:
		return matches[0], nil
	}
	return "", usagef("session prefix %q is ambiguous: %s", id, candidates(matches))
}

// dir is where the session stores are.
func (c *rollbackCmd) dir() (string, error) {
	if c.StateDir != "" {
		return filepath.Join(c.StateDir, "rollback"), nil
	}
	return rollback.Dir()
}

// reportLine renders what happened to one path, or with dry what would.
func reportLine(r rollback.FileReport, dry bool) string {
	copied := ""
	if r.Copy != "" {
		verb := "is kept in"
		if dry {
			verb = "would be kept in"
		}
		copied = fmt.Sprintf(" (%s; what was there %s %s)", r.Reason, verb, r.Copy)
	}
	switch {
	case r.Action == rollback.Failed:
		return fmt.Sprintf("FAILED %s: %s", r.Path, r.Err)
	case r.Action == rollback.Unchanged:
		return "unchanged " + r.Path
	case r.Action == rollback.Kept:
		verb, hint := "kept", ""
		if dry {
			verb = "would keep"
		}
		if r.Forcible {
			hint = " (rein rollback --force to overwrite)"
		}
		return fmt.Sprintf("%s %s: %s%s", verb, r.Path, r.Reason, hint)
	case r.Action == rollback.Deleted && dry:
		return fmt.Sprintf("would delete %s (created by the agent)%s", r.Path, copied)
	case r.Action == rollback.Deleted:
		return fmt.Sprintf("deleted %s (created by the agent)%s", r.Path, copied)
	case dry:
		return "would restore " + r.Path + copied
	}
	return "restored " + r.Path + copied
}

// unknownSession says so, lists the sessions that have snapshots, and
// exits with the usage status.
func unknownSession(e env, dir, id string) error {
	fmt.Fprintf(e.stderr, "rein: no snapshots of session %s in %s\n", termsafe.Line(id), termsafe.Line(dir))
	known, err := rollback.Sessions(dir)
	switch {
	case err != nil:
		fmt.Fprintf(e.stderr, "rein: %v\n", termsafe.Line(err.Error()))
	case len(known) == 0:
		fmt.Fprintln(e.stderr, "rein: no session has snapshots there; rein saves a file there before write_file or edit_file changes it")
	default:
		fmt.Fprintln(e.stderr, "rein: sessions with snapshots, most recent first:")
		for _, k := range known[:min(len(known), maxListed)] {
			fmt.Fprintf(e.stderr, "  %s\n", termsafe.Line(k))
		}
		if len(known) > maxListed {
			fmt.Fprintf(e.stderr, "  … and %d older\n", len(known)-maxListed)
		}
	}
	return exitCode(exitUsage)
}
