package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/internal/termsafe"
)

type auditCmd struct {
	Verify auditVerifyCmd `cmd:"" help:"Check that audit logs are whole and unchanged: the hash chain, sequence numbers, session and times. Exit 1 names the first bad line."`
	Show   auditShowCmd   `cmd:"" help:"Print an audit log as a readable timeline: steps, calls, verdicts, results, the stop and the refusals."`
	Repair auditRepairCmd `cmd:"" help:"Drop the cut last record of a log (rein was killed while writing it), keeping a copy of the log as it was; any other damage is refused."`
}

type auditRepairCmd struct {
	File     string `arg:"" name:"session" help:"The session whose log to repair: its id, a unique prefix of one, or the log's path (SESSION.jsonl)."`
	DryRun   bool   `name:"dry-run" help:"Say what would be dropped, and change nothing."`
	AuditDir string `placeholder:"DIR" help:"Where to look up a session id (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
}

func (c *auditRepairCmd) Run(e env) error {
	files, err := logPaths(c.AuditDir, []string{c.File})
	if err != nil {
		return err
	}
	c.File = files[0]
	data, err := os.ReadFile(c.File)
	if err != nil {
		return err
	}
	cut, ok, err := audit.FindCut(data)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", c.File, err)
	case !ok:
		fmt.Fprintf(e.stdout, "%s: intact, nothing to repair\n", termsafe.Line(c.File))
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: the last line is a cut record: %d bytes at offset %d, starting %q\n", termsafe.Line(c.File), cut.Size, cut.Offset, termsafe.Line(cut.Head))
	if c.DryRun {
		fmt.Fprintf(e.stdout, "%s: --dry-run: nothing changed\n", termsafe.Line(c.File))
		return nil
	}
	r, ok, err := audit.Repair(c.File, time.Now())
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", c.File, err)
	case !ok: // repaired by someone else meanwhile
		fmt.Fprintf(e.stdout, "%s: intact, nothing to repair\n", termsafe.Line(c.File))
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: dropped it (%d bytes); the log as it was is kept in %s\n", termsafe.Line(c.File), r.Cut.Size, termsafe.Line(r.Copy))
	return nil
}

type auditVerifyCmd struct {
	Files    []string `arg:"" name:"session" help:"The sessions whose logs to check: ids, unique prefixes of ids, or the logs' paths (SESSION.jsonl)."`
	JSON     bool     `name:"json" help:"Print one JSON object per file: file, lines, session, first_bad, problem, complete, head."`
	AuditDir string   `placeholder:"DIR" help:"Where to look up session ids (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
}

func (c *auditVerifyCmd) Run(e env) error {
	files, err := logPaths(c.AuditDir, c.Files)
	if err != nil {
		return err
	}
	c.Files = files
	broken := false
	enc := json.NewEncoder(e.stdout)
	for _, name := range c.Files {
		rep, err := verifyFile(name)
		if err != nil {
			return err
		}
		broken = broken || !rep.Intact()
		if c.JSON {
			if err := enc.Encode(struct {
				File string `json:"file"`
				audit.Report
			}{name, rep}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(e.stdout, termsafe.Line(verdictLine(name, rep)))
	}
	if broken {
		return exitCode(exitError)
	}
	return nil
}

func verifyFile(name string) (audit.Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return audit.Report{}, err
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil {
		return rep, fmt.Errorf("%s: %w", name, err)
	}
	return rep, nil
}

// verdictLine is verify's one line about a file.
func verdictLine(name string, rep audit.Report) string {
	if !rep.Intact() {
		return fmt.Sprintf("%s: line %d: %s", name, rep.FirstBad, rep.Problem)
	}
	end := "complete"
	if !rep.Complete {
		end = "no stop record (interrupted)"
	}
	noun := "records"
	if rep.Records == 1 {
		noun = "record"
	}
	return fmt.Sprintf("%s: intact, %d %s, session %s, %s", name, rep.Records, noun, rep.Session, end)
}

type auditShowCmd struct {
	File     string `arg:"" name:"session" help:"The session whose log to show: its id, a unique prefix of one, or the log's path (SESSION.jsonl)."`
	Refusals bool   `help:"Print only the refused calls, grouped by the gate that refused them."`
	AuditDir string `placeholder:"DIR" help:"Where to look up a session id (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
}

func (c *auditShowCmd) Run(e env) error {
	files, err := logPaths(c.AuditDir, []string{c.File})
	if err != nil {
		return err
	}
	c.File = files[0]
	f, err := os.Open(c.File)
	if err != nil {
		return err
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	if !rep.Intact() {
		fmt.Fprintf(e.stdout, "warning: %s: line %d: %s; the log is damaged or was changed, what follows is what it says now\n\n",
			termsafe.Line(c.File), rep.FirstBad, termsafe.Line(rep.Problem))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	if err := audit.Show(e.stdout, f, audit.ShowOptions{Refusals: c.Refusals}); err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	if !rep.Intact() {
		return exitCode(exitError)
	}
	return nil
}

// logPaths turns session arguments into log paths: a file that exists,
// or anything written as a path, is taken as it is (checkFiles judges
// it); anything else is a session id or a unique prefix of one, looked up
// in the audit dir.
func logPaths(auditDirFlag string, args []string) ([]string, error) {
	paths := make([]string, len(args))
	dir := ""
	for i, a := range args {
		if _, err := os.Stat(a); err == nil || strings.ContainsRune(a, filepath.Separator) || strings.HasSuffix(a, ".jsonl") {
			paths[i] = a
			continue
		}
		if dir == "" {
			d, err := sessionsDir(auditDirFlag)
			if err != nil {
				return nil, err
			}
			dir = d
		}
		_, p, err := resolveSession(dir, a)
		if err != nil {
			return nil, err
		}
		paths[i] = p
	}
	return paths, checkFiles(paths)
}

// checkFiles makes a missing file or a directory a usage error (exit 2),
// before any file is read. A file that exists but cannot be read is an error
// (exit 1) when it is opened.
func checkFiles(names []string) error {
	for _, name := range names {
		st, err := os.Stat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return usagef("%s: no such file (the logs are in $XDG_STATE_HOME/rein/audit unless --audit-dir or audit.dir said otherwise)", name)
		case err != nil:
			return err
		case st.IsDir():
			return usagef("%s is a directory: give the log files (SESSION.jsonl) in it", name)
		}
	}
	return nil
}
