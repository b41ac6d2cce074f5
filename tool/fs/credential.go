package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/secret"
)

// What makes a file a credential file to read_file and grep: its name (or
// the name a symbolic link inside the work dir leads to) by
// secret.CredentialFile, or its content, when the session's redactor would
// change it. Such a file is not shown without a human's yes (tool.Confirmer):
// redaction hides a secret as it is written, not what a file holds beside
// it, nor the value once a command has re-spelled it.

// credentialName reports whether rel, or the path its symbolic links
// inside the root lead to, is named like a credential file, and that path.
func (w workdir) credentialName(rel string) (bool, string) {
	real := w.resolve(rel)
	return secret.CredentialFile(rel) || secret.CredentialFile(real), real
}

// resolve follows the symbolic links in rel that stay inside the root
// (absolute or escaping ones are the root's to refuse), at most 40, and
// returns the path they lead to, relative to the root.
func (w workdir) resolve(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	cur := ""
	for hops, i := 0, 0; i < len(parts); i++ {
		next := path.Join(cur, parts[i])
		info, err := w.root.Lstat(next)
		if err != nil || info.Mode()&iofs.ModeSymlink == 0 || hops >= 40 {
			cur = next
			continue
		}
		hops++
		target, err := w.root.Readlink(next)
		if err != nil || path.IsAbs(target) {
			cur = next
			continue
		}
		parts = append(strings.Split(path.Join(cur, target), "/"), parts[i+1:]...)
		cur, i = "", -1
	}
	return cur
}

var redactedName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\[REDACTED:([A-Za-z0-9_]+)\]`)
})

// secretsIn returns the names of the secrets redact finds in text (its
// [REDACTED:NAME] marks that text did not hold already), sorted; nil when
// redact is nil or finds none.
func secretsIn(redact func(string) string, text string) []string {
	if redact == nil {
		return nil
	}
	red := redact(text)
	if red == text {
		return nil
	}
	var names []string
	for _, m := range redactedName().FindAllStringSubmatch(red, -1) {
		if !slices.Contains(names, m[1]) && !strings.Contains(text, m[0]) {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		names = []string{"unnamed"}
	}
	slices.Sort(names)
	return names
}

// credentialReason says why the tool (verb: "read", "search") must ask
// before it shows the file rel, p as the model gave it; "" when it need
// not, or when the file cannot be read (the tool will say why).
func (w workdir) credentialReason(ctx context.Context, rel, p, verb string, redact func(string) string, maxBytes int64) string {
	if w.root == nil {
		return ""
	}
	if named, real := w.credentialName(rel); named {
		if real != path.Clean(filepath.ToSlash(rel)) && !secret.CredentialFile(rel) {
			return fmt.Sprintf("would %s %s, a link to %s, a credential file: approve only if the task needs what it holds", verb, p, real)
		}
		return fmt.Sprintf("would %s %s, a credential file: approve only if the task needs what it holds", verb, p)
	}
	if redact == nil {
		return ""
	}
	data, err := readText(ctx, w.root, rel, p, maxBytes)
	if err != nil {
		return ""
	}
	if names := secretsIn(redact, string(data)); len(names) > 0 {
		return fmt.Sprintf("would %s %s, which holds a secret (%s): approve only if the task needs what it holds", verb, p, strings.Join(names, ", "))
	}
	return ""
}

// ErrChanged marks a file that became a credential file between the check
// that let a call run without a question and the call itself (a link or
// the content swapped meanwhile).
var ErrChanged = errors.New("the file changed since it was checked")

// clearance remembers the paths Confirm let through without a question,
// so that the call's run can refuse one that has since become a
// credential file. A path is forgotten when its call runs.
type clearance struct {
	mu    sync.Mutex
	paths map[string]struct{}
}

// maxCleared bounds what a clearance remembers (calls judged and never
// run, as in a policy check, would otherwise pile up).
const maxCleared = 256

func (c *clearance) clear(rel string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paths == nil || len(c.paths) >= maxCleared {
		c.paths = map[string]struct{}{}
	}
	c.paths[rel] = struct{}{}
}

// take reports whether rel was let through without a question, and
// forgets it.
func (c *clearance) take(rel string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.paths[rel]
	delete(c.paths, rel)
	return ok
}

// recheck refuses data read from rel (p as the model gave it) when the
// file was let through without a question and now is a credential file.
func (w workdir) recheck(c *clearance, rel, p string, redact func(string) string, data []byte) error {
	if !c.take(rel) {
		return nil
	}
	if named, _ := w.credentialName(rel); named || len(secretsIn(redact, string(data))) > 0 {
		return errf(ErrChanged, "%s was not a credential file when this call was checked, and is one now (a link or its content changed meanwhile); it was not shown. Read it again: a human will be asked", p)
	}
	return nil
}
