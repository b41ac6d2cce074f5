package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/secret"
	"github.com/reinhq/rein/tool"
)

// GrepArgs are grep's arguments.
type GrepArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`    // file or directory; "" means the work dir
	Include string `json:"include,omitempty"` // glob on file names, e.g. "*.go"
}

// Check validates the pattern and the include glob.
func (a *GrepArgs) Check() error {
	if a.Pattern == "" {
		return errors.New(`"pattern" is required: a regular expression such as "func \w+\("`)
	}
	if _, err := compileGrep(a.Pattern); err != nil {
		return err
	}
	if a.Include != "" {
		if _, err := compileGlob(a.Include); err != nil {
			return fmt.Errorf(`"include": %w`, err)
		}
	}
	return nil
}

func compileGrep(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("pattern %q is not a valid Go (RE2) regular expression: %v; fix it (no look-around or backreferences; escape literal ( [ . * + ? with \\)", p, cause(err))
	}
	return re, nil
}

// Grepper is the grep tool. Searching a credential file it was pointed at
// needs a human's yes (tool.Confirmer); in a directory, credential files
// are skipped with a note, their lines never shown.
type Grepper struct {
	*tool.Func[GrepArgs]
	w        workdir
	redact   func(string) string
	maxBytes int64
	cleared  clearance
}

var _ tool.Confirmer = (*Grepper)(nil)

// Confirm returns why the search needs a human's yes: "path" names a
// credential file (see Reader.Confirm). A directory never does: its
// credential files are skipped.
func (g *Grepper) Confirm(ctx context.Context, args json.RawMessage) string {
	var a GrepArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return ""
	}
	rel, err := g.w.rel(a.Path)
	if err != nil || g.w.root == nil {
		return ""
	}
	if info, err := g.w.root.Stat(rel); err != nil || info.IsDir() {
		return ""
	}
	if why := g.w.credentialReason(ctx, rel, display(a.Path), "search", g.redact, g.maxBytes); why != "" {
		return "grep " + why
	}
	g.cleared.clear(rel)
	return ""
}

// Grep returns the grep tool: lines of text files that match a regular
// expression, as "path:line: text".
func Grep(root *os.Root, o Options) *Grepper {
	w := newWorkdir(root)
	maxResults, maxBytes := o.results(DefaultGrepMax), o.maxBytes()
	g := &Grepper{w: w, redact: o.Redact, maxBytes: maxBytes}
	schema := `{"type":"object","properties":{` +
		`"pattern":{"type":"string","minLength":1,"maxLength":1024,"description":"Go (RE2) regular expression matched against each line, e.g. func \\w+\\( or TODO"},` +
		`"path":{"type":"string","maxLength":4096,"description":"File or directory to search, relative to the working directory; default the working directory"},` +
		`"include":{"type":"string","maxLength":1024,"pattern":"^[^/]","description":"Only search files whose name matches this glob, e.g. *.go; with a / it matches the path below \"path\", e.g. **/testdata/*.txt"}},` +
		`"required":["pattern"],"additionalProperties":false}`
	f := tool.New(tool.Spec{
		Name: "grep",
		Description: fmt.Sprintf("Search the text files in the working directory for lines that match a Go (RE2) regular expression. "+
			"Returns matches as path:line: text, at most %d, with a notice when there are more; long lines are cut. "+
			"\"path\" may be a file or a directory (default the working directory); \"include\" limits the search to file names matching a glob such as *.go. "+
			"Binary files, files over %s, .git, FIFOs and devices, and symbolic links inside directories are skipped; so are credential files (.env, keys, tokens, files that hold a secret) "+
			"unless you name one as \"path\", which needs a human's approval. "+
			"Use it to find where something is defined or used before reading the file; it does not search outside the working directory.", maxResults, size(maxBytes)),
		Schema: json.RawMessage(schema),
		Effect: tool.ReadOnly,
		Roles:  map[string]tool.Role{"path": tool.RolePath, "include": tool.RoleGlob},
	}, func(ctx context.Context, a GrepArgs) (string, error) {
		s := &search{w: w, max: maxResults, maxBytes: maxBytes, redact: o.Redact, cleared: &g.cleared}
		return s.run(ctx, a)
	})
	g.Func = f
	return g
}

// search is one grep call's state.
type search struct {
	w        workdir
	max      int
	maxBytes int64
	re       *regexp.Regexp
	out      strings.Builder
	matches  int
	more     bool // a match past max was found
	skipped  int  // files skipped as binary or too large
	visits   int
	redact   func(string) string
	secret   []string // credential files skipped in a directory, in walk order
	cleared  *clearance
}

// maxNamed is how many skipped credential files the note names.
const maxNamed = 5

func (s *search) run(ctx context.Context, a GrepArgs) (string, error) {
	var err error
	if s.re, err = compileGrep(a.Pattern); err != nil {
		return "", err
	}
	var inc glob
	if a.Include != "" {
		if inc, err = compileGlob(a.Include); err != nil {
			return "", fmt.Errorf(`"include": %w`, err)
		}
	}
	base, err := s.w.rel(a.Path)
	if err != nil {
		return "", err
	}
	info, err := s.w.root.Stat(base)
	if err != nil {
		return "", opErr("search", display(a.Path), err)
	}
	if !info.IsDir() {
		// A file named directly is searched whatever include says.
		if err := s.file(ctx, base, true); err != nil {
			return "", err
		}
	} else if err := s.dir(ctx, base, inc); err != nil {
		return "", err
	}
	if s.matches == 0 {
		msg := fmt.Sprintf("no matches for %q in %s", a.Pattern, display(a.Path))
		if a.Include != "" {
			msg += fmt.Sprintf(" (files matching %q)", a.Include)
		}
		if s.skipped > 0 {
			msg += fmt.Sprintf("; %d binary or oversized files skipped", s.skipped)
		}
		if n := s.secretNote(); n != "" {
			msg += "\n" + n
		}
		return msg, nil
	}
	if n := s.secretNote(); n != "" {
		fmt.Fprintf(&s.out, "%s\n", n)
	}
	if s.more {
		fmt.Fprintf(&s.out, "[stopped at %d matches; narrow the pattern, the path or include to see the rest]\n", s.max)
	}
	if s.visits > maxVisits {
		fmt.Fprintf(&s.out, "[stopped after looking at %d entries; narrow the path or include]\n", maxVisits)
	}
	return strings.TrimSuffix(s.out.String(), "\n"), nil
}

func (s *search) dir(ctx context.Context, base string, inc glob) error {
	err := iofs.WalkDir(s.w.root.FS(), base, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			if p == base {
				return err
			}
			return nil // an unreadable directory below: skip it
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.visits++; s.visits > maxVisits {
			return iofs.SkipAll
		}
		switch {
		case d.IsDir() && d.Name() == ".git" && p != base:
			return iofs.SkipDir
		case d.IsDir() || !d.Type().IsRegular():
			return nil // symbolic links and devices are not followed or read
		case len(inc.segs) > 0 && !includes(inc, base, p):
			return nil
		case secret.CredentialFile(p):
			s.secret = append(s.secret, p)
			return nil
		}
		if err := s.file(ctx, p, false); err != nil {
			return err
		}
		if s.more {
			return iofs.SkipAll
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return opErr("search", base, err)
	}
	return err
}

// includes matches a file against include: by name when include has no
// "/", else by its path below base.
func includes(inc glob, base, p string) bool {
	if len(inc.segs) == 1 {
		ok, _ := path.Match(inc.segs[0], path.Base(p))
		return ok
	}
	return inc.match(splitRel(base, p))
}

// file searches one file. named is true when the model named it: then a
// file that cannot be searched is an error, not a silent skip.
func (s *search) file(ctx context.Context, p string, named bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, _, err := openRegular(s.w.root, p, p, "search")
	if err != nil {
		if named {
			return err
		}
		return nil // swapped for a FIFO or a device after the walk saw it: skip it
	}
	defer f.Close()
	data, err := readAll(ctx, f, s.maxBytes+1)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil && named:
		return opErr("search", p, err)
	case err != nil:
		return nil
	case int64(len(data)) > s.maxBytes:
		if named {
			return errf(ErrTooLarge, "%s is larger than the %s this tool searches; search a smaller file", p, size(s.maxBytes))
		}
		s.skipped++
		return nil
	case bytes.IndexByte(data[:min(len(data), binarySniffLength)], 0) >= 0:
		if named {
			return errf(ErrBinary, "%s is binary; grep searches text files only", p)
		}
		s.skipped++
		return nil
	}
	if named {
		if err := s.w.recheck(s.cleared, p, p, s.redact, data); err != nil {
			return err
		}
	}
	if !named && s.redact != nil && s.re.Match(data) && len(secretsIn(s.redact, string(data))) > 0 {
		// A file holding a secret the redactor knows: its lines could carry
		// what redaction does not hide.
		s.secret = append(s.secret, p)
		return nil
	}
	for n := 1; len(data) > 0; n++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if !s.re.Match(line) {
			continue
		}
		if s.matches == s.max {
			s.more = true
			return nil
		}
		s.matches++
		fmt.Fprintf(&s.out, "%s:%d: %s\n", p, n, clip(line))
	}
	return nil
}

// secretNote says which credential files a directory search skipped.
func (s *search) secretNote() string {
	if len(s.secret) == 0 {
		return ""
	}
	names := s.secret[:min(len(s.secret), maxNamed)]
	more := ""
	if len(s.secret) > maxNamed {
		more = fmt.Sprintf(" and %d more", len(s.secret)-maxNamed)
	}
	return fmt.Sprintf("[%s not searched: %s%s. To search one, give it as \"path\": a human must approve]",
		plural(len(s.secret), "credential file"), strings.Join(names, ", "), more)
}

// clip returns a line for output: without a trailing CR, valid UTF-8, and
// cut after maxGrepLineBytes.
func clip(line []byte) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) <= maxGrepLineBytes {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	i := maxGrepLineBytes
	for i > 0 && !utf8.RuneStart(line[i]) {
		i--
	}
	return strings.ToValidUTF8(string(line[:i]), "\uFFFD") + " […cut]"
}
