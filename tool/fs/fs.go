// Package fs holds the file tools: read_file, glob, grep, write_file and
// edit_file. Every one of them works through an *os.Root opened on the work
// directory, so "..", absolute paths and symbolic links cannot lead out of it
// even when a path changes between a check and its use: the kernel resolves
// each name component under the root's open directory.
//
// Paths are relative to the work directory. An absolute path is accepted
// only when it lies lexically inside the work directory (as opened, or as
// its symbolic links resolve); it is then used relative to it. A path that
// starts with "~" is refused: a model means the home directory by it.
//
// The tools never decide whether they may run (the gates do) and will not
// follow a symbolic link that is absolute or leads out of the work
// directory, create files outside it, or read files that are not UTF-8 text.
package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reinhq/rein/tool"
)

// Defaults of Options.
const (
	DefaultLimit      = 2000     // lines read_file returns when limit is omitted
	MaxLimit          = 2000     // the most lines read_file returns per call
	DefaultMaxBytes   = 10 << 20 // largest file read or edited
	DefaultGrepMax    = 200      // grep matches returned
	DefaultGlobMax    = 500      // glob paths returned
	MaxContentBytes   = 1 << 20  // largest write_file content and edit_file strings, in characters
	maxLineChars      = 2000     // read_file cuts longer lines
	maxOutputBytes    = 256 << 10
	maxGrepLineBytes  = 500
	maxVisits         = 100_000 // entries glob or grep look at before giving up
	binarySniffLength = 8 << 10
)

// Options configures the file tools. The zero value means the defaults.
type Options struct {
	DefaultLimit int   // lines read_file returns when limit is omitted (default 2000, at most 2000)
	MaxFileBytes int64 // largest file read, searched or edited (default 10 MB)
	MaxResults   int   // grep matches / glob paths returned (default 200 / 500)
	// Redact, when set, is the session's redactor (secret.Redactor.Redact):
	// a file in which it would change anything (an exported secret's value
	// or a spelling of it, a private key, a known key format) is a
	// credential file to read_file and grep, as one named like it is.
	Redact func(string) string
}

func (o Options) limit() int {
	if o.DefaultLimit <= 0 || o.DefaultLimit > MaxLimit {
		return DefaultLimit
	}
	return o.DefaultLimit
}

func (o Options) maxBytes() int64 {
	if o.MaxFileBytes <= 0 {
		return DefaultMaxBytes
	}
	return o.MaxFileBytes
}

func (o Options) results(def int) int {
	if o.MaxResults <= 0 {
		return def
	}
	return o.MaxResults
}

// Tools returns read_file, glob, grep, write_file and edit_file over root.
func Tools(root *os.Root, o Options) []tool.Tool {
	return []tool.Tool{ReadFile(root, o), Glob(root, o), Grep(root, o), WriteFile(root, o), EditFile(root, o)}
}

// Errors the tools return, for callers that branch on them. A missing file
// wraps tool.ErrNotExist.
var (
	ErrOutside  = errors.New("outside the working directory")
	ErrBinary   = errors.New("not a text file")
	ErrTooLarge = errors.New("file too large")
	ErrIsDir    = errors.New("is a directory")
	ErrNotFound = errors.New("old_string not found")
	ErrNotUniq  = errors.New("old_string not unique")
)

// toolError is an error whose text is written for the model and which
// unwraps to a sentinel for callers.
type toolError struct {
	kind error
	msg  string
}

func (e *toolError) Error() string { return e.msg }
func (e *toolError) Unwrap() error { return e.kind }

func errf(kind error, format string, args ...any) error {
	return &toolError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// workdir turns the model's paths into paths relative to the root.
type workdir struct {
	root *os.Root
	abs  string // the root's name made absolute and clean
	real string // abs with its symbolic links resolved
}

// ErrNoRoot is returned by tools built without a work directory (a
// registry made only to list and describe the tools).
var ErrNoRoot = errors.New("no work directory")

func newWorkdir(root *os.Root) workdir {
	if root == nil {
		return workdir{}
	}
	w := workdir{root: root, abs: filepath.Clean(root.Name())}
	if a, err := filepath.Abs(w.abs); err == nil {
		w.abs = a
	}
	w.real = w.abs
	if r, err := filepath.EvalSymlinks(w.abs); err == nil {
		w.real = r
	}
	return w
}

// rel returns p relative to the work directory, cleaned; "" means ".".
// It refuses what would leave the work directory lexically; symbolic links
// are the root's to refuse.
func (w workdir) rel(p string) (string, error) {
	switch {
	case w.root == nil:
		return "", errf(ErrNoRoot, "this session has no working directory, so no file can be opened")
	case p == "":
		return ".", nil
	case strings.IndexByte(p, 0) >= 0:
		return "", errf(ErrOutside, "the path %q contains a NUL byte, which no file name can contain; use a plain path relative to the working directory", p)
	case p[0] == '~':
		return "", errf(ErrOutside, "the path %q starts with ~, the home directory, which is outside the working directory; use a path relative to the working directory", p)
	case filepath.IsAbs(p):
		c := filepath.Clean(p)
		for _, base := range []string{w.abs, w.real} {
			if c == base {
				return ".", nil
			}
			if rest, ok := strings.CutPrefix(c, base+string(filepath.Separator)); ok {
				return rest, nil
			}
		}
		return "", errf(ErrOutside, "the path %q is outside the working directory; use a path relative to the working directory", p)
	}
	c := filepath.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", errf(ErrOutside, "the path %q climbs out of the working directory with \"..\"; use a path inside the working directory", p)
	}
	return c, nil
}

// opErr explains an error of a root operation on the path p the model gave.
func opErr(verb, p string, err error) error {
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return errf(tool.ErrNotExist, "%s does not exist: check the name, or use glob to see what exists", p)
	case errors.Is(err, syscall.ENOTDIR):
		return errf(tool.ErrNotExist, "%s does not exist: a part of it is a file, not a directory", p)
	case errors.Is(err, iofs.ErrPermission):
		return fmt.Errorf("cannot %s %s: permission denied; try another file", verb, p)
	case escapes(err):
		return errf(ErrOutside, "cannot %s %s: it leads outside the working directory through a symbolic link (links that are absolute or lead out are not followed); use a path inside the working directory", verb, p)
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("cannot %s %s: too many levels of symbolic links; use the file's real path", verb, p)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("cannot %s %s: the name is too long; use a shorter path", verb, p)
	}
	return fmt.Errorf("cannot %s %s: %w", verb, p, cause(err))
}

// escapes reports whether err is os.Root's refusal of a path that leads out
// of the root. The os package does not export that error, so its text is
// compared; should the text change, the caller's generic message still
// names the cause.
func escapes(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// cause drops the PathErrors around err, whose path is the one the model
// already knows; any other error is kept whole.
func cause(err error) error {
	for {
		pe, ok := err.(*iofs.PathError)
		if !ok {
			return err
		}
		err = pe.Err
	}
}

// display is how a path is shown back to the model: as it gave it, or "."
// when it gave none.
func display(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// size renders a byte count for a model: "10 MB", "512 KB", "100 bytes".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
