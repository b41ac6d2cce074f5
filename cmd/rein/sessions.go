package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/price"
)

type sessionsCmd struct {
	AuditDir string `placeholder:"DIR" help:"Where the audit logs are (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
	JSON     bool   `name:"json" help:"Print one JSON object per session instead of the table."`
}

// sessionInfo is one session as rein sessions lists it, read from its log.
type sessionInfo struct {
	ID      string    `json:"id"`
	Start   time.Time `json:"start"`
	Workdir string    `json:"workdir,omitempty"`
	Model   string    `json:"model,omitempty"`
	Task    string    `json:"task"`
	// Stop is the stop record's reason, or "interrupted" when the log
	// ends without one (or with records after it: a resume under way).
	Stop   string `json:"stop"`
	Tokens int64  `json:"tokens"`
	// CostUSD is the cost of the model calls at the price the session
	// recorded; absent when it recorded none.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	Log     string   `json:"log"`
}

// taskWidth is how much of a task one line of the table shows.
const taskWidth = 60

func (c *sessionsCmd) Run(e env) error {
	dir, err := sessionsDir(c.AuditDir)
	if err != nil {
		return err
	}
	list, err := listSessions(dir)
	if err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(safeJSON{e.stdout})
		for _, s := range list {
			if err := enc.Encode(s); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stderr, "rein: no sessions in %s\n", termsafe.Line(dir))
		return nil
	}
	for _, s := range list {
		cost := "-"
		if s.CostUSD != nil {
			cost = fmt.Sprintf("$%.4f", *s.CostUSD)
		}
		fmt.Fprintf(e.stdout, "%s  %s  %-11s %8s  %s  %s\n", termsafe.Line(s.ID), s.Start.Local().Format("2006-01-02 15:04"),
			termsafe.Line(s.Stop), termsafe.Line(cost), termsafe.Line(s.Workdir), termsafe.Line(clipTask(s.Task)))
	}
	return nil
}

// clipTask is a task on one line, at most taskWidth runes.
func clipTask(task string) string {
	t := strings.Join(strings.Fields(task), " ")
	if r := []rune(t); len(r) > taskWidth {
		return string(r[:taskWidth-1]) + "…"
	}
	return t
}

// sessionsDir is the audit directory: the flag, else audit.dir from the
// user's config, else the default.
func sessionsDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	cfg, err := config.Load(config.Source{Path: config.UserFile()})
	if err != nil {
		return "", usageError{err}
	}
	return auditDir("", cfg)
}

// listSessions reads every log in dir, newest first. A log that cannot be
// read is listed with what could be read of it.
func listSessions(dir string) ([]sessionInfo, error) {
	ids, err := sessionIDs(dir)
	if err != nil {
		return nil, err
	}
	list := make([]sessionInfo, 0, len(ids))
	for _, id := range ids {
		list = append(list, readSession(audit.FileName(dir, id), id))
	}
	slices.SortStableFunc(list, func(a, b sessionInfo) int {
		if c := b.Start.Compare(a.Start); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return list, nil
}

// sessionIDs are the ids of the logs in dir, sorted.
func sessionIDs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit dir: %w", err)
	}
	var ids []string
	for _, en := range entries {
		if id, ok := strings.CutSuffix(en.Name(), ".jsonl"); ok && en.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// readSession summarises one log.
func readSession(path, id string) sessionInfo {
	s := sessionInfo{ID: id, Log: path, Stop: "interrupted"}
	f, err := os.Open(path)
	if err != nil {
		s.Stop = "unreadable"
		return s
	}
	defer f.Close()
	var start recordedStart
	var usage model.Usage
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		var rec audit.Record
		if len(line) > 0 && !audit.Padding(line) && json.Unmarshal(line, &rec) == nil {
			switch rec.Type {
			case audit.SessionStart:
				if s.Start.IsZero() {
					s.Start, s.Task = rec.Time, rec.Task
					_ = json.Unmarshal(rec.Config, &start)
				}
				s.Stop = "interrupted"
			case audit.ModelCall:
				if rec.Usage != nil {
					usage.Input += rec.Usage.Input
					usage.Output += rec.Usage.Output
					usage.CacheRead += rec.Usage.CacheRead
					usage.CacheWrite += rec.Usage.CacheWrite
				}
				s.Tokens = max(s.Tokens, rec.Tokens)
				s.Stop = "interrupted"
			case audit.Stop:
				s.Stop = string(rec.Stop) // shown as it is, or "interrupted"
				s.Tokens = max(s.Tokens, rec.Tokens)
			default:
				s.Stop = "interrupted"
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.Stop = "unreadable"
			}
			break
		}
	}
	st := start.Meta.Settings
	s.Workdir, s.Model = st.Workdir, st.Model
	if s.Model == "" {
		s.Model = start.Model
	}
	if st.Price != nil {
		c := price.Of(*st.Price, price.Usage(usage)).Total
		s.CostUSD = &c
	}
	return s
}

// resolveSession finds the log a session argument names: a log's path
// (anything with a slash or ending .jsonl), a session id, or a unique
// prefix of one in dir. An ambiguous prefix lists its candidates; an
// unknown one says where it looked and how to list the sessions.
func resolveSession(dir, arg string) (id, path string, err error) {
	if strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".jsonl") {
		return strings.TrimSuffix(filepath.Base(arg), ".jsonl"), arg, nil
	}
	if arg == "" {
		return "", "", usagef("no session given: pass its id, a unique prefix of one, or its log's path (rein sessions lists them)")
	}
	ids, err := sessionIDs(dir)
	if err != nil {
		return "", "", err
	}
	var matches []string
	for _, id := range ids {
		if id == arg {
			return id, audit.FileName(dir, id), nil
		}
		if strings.HasPrefix(id, arg) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 0:
		return "", "", usagef("no session %q in %s: pass its id, a unique prefix of one, or its log's path (rein sessions lists them)", arg, dir)
	case 1:
		return matches[0], audit.FileName(dir, matches[0]), nil
	}
	return "", "", usagef("session prefix %q is ambiguous: %s", arg, candidates(matches))
}

// candidates lists ids, at most maxListed of them, newest (largest) first.
func candidates(ids []string) string {
	ids = slices.Clone(ids)
	slices.Reverse(ids)
	more := ""
	if len(ids) > maxListed {
		more = fmt.Sprintf(" and %d more", len(ids)-maxListed)
		ids = ids[:maxListed]
	}
	return strings.Join(ids, ", ") + more
}
