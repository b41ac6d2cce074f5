package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/shell"
)

// RuleFile saves the "always" answers a human gives at a prompt as
// permission rules in one config file: the user's own (UserFile), never a
// project's .rein/config.toml, which a repository may carry. Each rule
// covers exactly the pattern the human was shown: an exact command
// (permission.Rule.Exact) or one path, glob characters escaped.
type RuleFile struct {
	Path string
}

var _ gate.RuleSaver = RuleFile{}

// ErrNoUserFile is returned when there is no user config file to save in.
var ErrNoUserFile = errors.New("no user config file (no home directory)")

// UserRules returns the saver of rules into the user's config file, and an
// error when there is none. A path inside workdir is refused: that is a
// project's file, which rein never writes rules into.
func UserRules(workdir string) (RuleFile, error) {
	f := UserFile()
	if f == "" {
		return RuleFile{}, ErrNoUserFile
	}
	if workdir != "" {
		if rel, err := filepath.Rel(workdir, f); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return RuleFile{}, fmt.Errorf("the user config %s is inside the work dir %s: rules are not saved there", f, workdir)
		}
	}
	return RuleFile{Path: f}, nil
}

// RuleFor is the permission rule that covers exactly p with the answer yes
// (allow) or no (deny).
func RuleFor(p gate.Pattern, yes bool) (permission.Rule, error) {
	r := permission.Rule{Tool: p.Tool, Decision: "deny"}
	if yes {
		r.Decision = "allow"
	}
	switch {
	case len(p.Command) > 0 && p.Dir != "":
		return r, fmt.Errorf("a command run in a directory of its own (%s) cannot be saved as a rule", p.Dir)
	case len(p.Command) > 0:
		r.Command = p.String()
		r.Exact = yes
		r.Match = []string{r.Command}
	case p.Path != "":
		r.Path = globEscape(p.Path)
		r.Match = []string{p.Path}
	default:
		return r, errors.New("the answer covers no pattern")
	}
	return r, nil
}

// globEscape escapes the characters path.Match reads as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// SaveRule appends the rule for p to the file, atomically: the new file
// is written beside the old one, loaded as a config to prove it valid
// (a file rein cannot add a rule to, like one whose rules are an inline
// array, is left alone and the error says so), then renamed over it.
func (f RuleFile) SaveRule(ctx context.Context, p gate.Pattern, yes bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.Path == "" {
		return ErrNoUserFile
	}
	r, err := RuleFor(p, yes)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(f.Path)
	mode := os.FileMode(0o600)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
			return fmt.Errorf("save rule: %w", err)
		}
	case err != nil:
		return fmt.Errorf("save rule: %w", err)
	default:
		if fi, err := os.Stat(f.Path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	var buf bytes.Buffer
	buf.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		buf.WriteByte('\n')
	}
	fmt.Fprintf(&buf, "\n# saved by rein from an \"always\" answer at a prompt\n[[permissions.rules]]\n")
	if err := toml.NewEncoder(&buf).Encode(r); err != nil {
		return fmt.Errorf("save rule: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".config-*.toml")
	if err != nil {
		return fmt.Errorf("save rule: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("save rule: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("save rule: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save rule: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save rule: %w", err)
	}
	c, err := Load(Source{Path: tmp.Name(), Required: true})
	if err != nil {
		return fmt.Errorf("save rule: the config with the rule added does not load, so %s is left as it was: %w", f.Path, err)
	}
	if _, err := permission.NewGate(permission.Default, c.Permissions.Rules, shell.Options{}); err != nil {
		return fmt.Errorf("save rule: the rule does not compile, so %s is left as it was: %w", f.Path, err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("save rule: %w", err)
	}
	return nil
}
