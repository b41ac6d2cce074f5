// Package secret keeps credentials out of the model's sight: it finds the
// environment variables that look like secrets (by name, never printing a
// value), builds the scrubbed environment child processes get, checks a
// system-prompt template for references to the environment, and redacts
// secret values and common key formats from any text before it reaches a
// model or the audit log.
//
// What it will not do: decide that a value is harmless. A variable whose
// name looks secret is treated as secret; a value that matches a key format
// is redacted wherever it appears.
package secret

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// secretWords mark an environment variable's name as a secret's.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "CREDS",
	"AUTH", "PRIVATE", "COOKIE", "SIGNATURE", "DSN", "CONNECTION_STRING", "WEBHOOK", "PAT"}

// LooksSecret reports whether an environment variable's name suggests a
// secret value (API_KEY, GITHUB_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY…).
func LooksSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if slices.Contains(secretWords, part) {
			return true
		}
	}
	return strings.HasSuffix(up, "APIKEY") || strings.HasSuffix(up, "TOKEN") || strings.HasSuffix(up, "SECRET")
}

// Names returns the names of the secret-looking variables of environ
// (KEY=VALUE entries), sorted. Values are never returned.
func Names(environ []string) []string {
	var names []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && value != "" && LooksSecret(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// NewToken returns a random per-session token (32 hex digits).
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Mask shows a token or key the way rein prints one: its first four
// characters and its length, never the whole.
func Mask(s string) string {
	if len(s) <= 8 {
		return fmt.Sprintf("[%d characters]", len(s))
	}
	return fmt.Sprintf("%s… [%d characters]", s[:4], len(s))
}

// ErrPrompt marks a system-prompt template that would leak the environment.
var ErrPrompt = errors.New("the system prompt would leak the environment")

var interpolation = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{[^}]*\b(env|getenv|Getenv)\b[^}]*\}\}|%[A-Za-z_][A-Za-z0-9_]*%`)
})

// CheckPrompt refuses a system-prompt template that interpolates the
// environment ($VAR, ${VAR}, {{ env … }}, %VAR%) or names one of the secret
// variables: the prompt goes to the model in full.
func CheckPrompt(template string, secretNames []string) error {
	if m := interpolation().FindString(template); m != "" {
		return fmt.Errorf("%w: it interpolates %q; write the value out, or leave it to a tool", ErrPrompt, m)
	}
	for _, n := range secretNames {
		if strings.Contains(template, n) {
			return fmt.Errorf("%w: it names the secret variable %s", ErrPrompt, n)
		}
	}
	return nil
}

// CredentialDirs returns the credential directories and files that exist
// under home (HomeCredentials), for the warning at start.
func CredentialDirs(home string) []string {
	var found []string
	for _, p := range HomeCredentials(home) {
		if _, err := os.Lstat(p); err == nil {
			found = append(found, p)
		}
	}
	return found
}

// SessionToken is a session's token for the processes it starts
// (REIN_SESSION_TOKEN): random, shown only masked, and rotated when the
// session ends, so that a token a command saw or leaked is no longer the
// session's. It is safe for concurrent use.
type SessionToken struct {
	mu  sync.Mutex
	cur string
}

// NewSessionToken returns a fresh token.
func NewSessionToken() (*SessionToken, error) {
	tok, err := NewToken()
	if err != nil {
		return nil, err
	}
	return &SessionToken{cur: tok}, nil
}

// Value returns the current token, for a child's environment only: never
// print or log it (Masked is for that).
func (t *SessionToken) Value() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur
}

// Masked returns the current token as Mask shows it.
func (t *SessionToken) Masked() string { return Mask(t.Value()) }

// Valid reports whether s is the current token (in constant time).
func (t *SessionToken) Valid(s string) bool {
	cur := t.Value()
	return len(s) == len(cur) && subtle.ConstantTimeCompare([]byte(s), []byte(cur)) == 1
}

// Rotate replaces the token with a new one; the old one is no longer Valid.
func (t *SessionToken) Rotate() error {
	tok, err := NewToken()
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.cur = tok
	t.mu.Unlock()
	return nil
}
