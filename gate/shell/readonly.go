package shell

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// Read-only proof. The permission gate lets a command line run without
// asking, in default mode, when the line is proven read-only and a sandbox
// runs it. The proof is an allowlist over the syntax tree, not a judgement
// of risk: every simple command must be a program in provenPrograms with
// only the options its checker knows to be read-only; redirections may only
// read, duplicate descriptors or discard into /dev/null; command and
// process substitutions must be proven themselves; no assignment, function,
// eval, exec, background job or unknown construct appears. What the sandbox
// already stops (reads outside the work dir, the network, writes outside
// it) is not judged again here: the proof is only used when a sandbox runs
// the command (Analyzer.ReadOnly).
//
// Programs whose behaviour is set by files in the repository (git's
// config: core.fsmonitor, core.pager, diff.external, textconv drivers,
// aliases, includes, submodules) are proven only when that config sets
// nothing but a short list of inert keys (gitconfig.go).

// ErrNotProven wraps every reason a command line is not proven read-only.
var ErrNotProven = errors.New("not proven read-only")

// wordKind says how much is known of a word before the shell runs.
type wordKind uint8

const (
	wordLit  wordKind = iota // literal text, quotes removed
	wordGlob                 // a relative pattern or loop item: file names or fixed words
	wordDyn                  // text only known at run time (parameters, substitutions)
)

// pword is one word of a command as the prover sees it.
type pword struct {
	val  string // the literal value; meaningful when kind is wordLit
	kind wordKind
}

func (w pword) lit() bool { return w.kind == wordLit }

// opt reports whether w is a literal option word ("-x", "--long").
func (w pword) opt() bool { return w.lit() && len(w.val) > 1 && w.val[0] == '-' }

// prover walks one command line. It is used once.
type prover struct {
	loopVars map[string]bool // for-loop variables bound to proven items
	git      bool            // a program reads the repository's git config
	cd       bool            // the line changes directory
	nodes    int
}

// ProveReadOnly reports, as an error wrapping ErrNotProven, why the parsed
// command line f is not proven read-only; nil means proven. It reads
// nothing but f: the repository's git config, which the proof of git and
// go commands also needs, is checked by Analyzer.ReadOnly.
func ProveReadOnly(f *syntax.File) error {
	_, err := proveFile(f)
	return err
}

func proveFile(f *syntax.File) (*prover, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: the line does not parse", ErrNotProven)
	}
	p := &prover{}
	if err := p.stmts(f.Stmts); err != nil {
		return p, fmt.Errorf("%w: %v", ErrNotProven, err)
	}
	if len(f.Stmts) == 0 {
		return p, fmt.Errorf("%w: the line is empty", ErrNotProven)
	}
	if p.git && p.cd {
		return p, fmt.Errorf("%w: git runs after a cd, in a repository whose config was not checked", ErrNotProven)
	}
	return p, nil
}

func (p *prover) stmts(ss []*syntax.Stmt) error {
	for _, s := range ss {
		if err := p.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

func (p *prover) stmt(s *syntax.Stmt) error {
	p.nodes++
	if p.nodes > maxNodes {
		return errors.New("the line is too large to prove")
	}
	if s.Background || s.Coprocess || s.Disown {
		return errors.New("a command runs in the background")
	}
	for _, r := range s.Redirs {
		if err := p.redir(r); err != nil {
			return err
		}
	}
	switch c := s.Cmd.(type) {
	case nil:
		return nil // redirections alone, judged above
	case *syntax.CallExpr:
		return p.call(c)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt, syntax.Pipe, syntax.PipeAll:
		default:
			return fmt.Errorf("operator %s", c.Op)
		}
		if err := p.stmt(c.X); err != nil {
			return err
		}
		return p.stmt(c.Y)
	case *syntax.Subshell:
		return p.stmts(c.Stmts)
	case *syntax.Block:
		return p.stmts(c.Stmts)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			if err := p.stmts(ic.Cond); err != nil {
				return err
			}
			if err := p.stmts(ic.Then); err != nil {
				return err
			}
		}
		return nil
	case *syntax.WhileClause:
		if err := p.stmts(c.Cond); err != nil {
			return err
		}
		return p.stmts(c.Do)
	case *syntax.ForClause:
		wi, ok := c.Loop.(*syntax.WordIter)
		if !ok || wi.Name == nil {
			return errors.New("an arithmetic for loop")
		}
		for _, w := range wi.Items {
			if _, err := p.word(w); err != nil {
				return err
			}
		}
		if p.loopVars == nil {
			p.loopVars = map[string]bool{}
		}
		p.loopVars[wi.Name.Value] = true
		return p.stmts(c.Do)
	case *syntax.TimeClause:
		if c.Stmt == nil {
			return nil
		}
		return p.stmt(c.Stmt)
	}
	return fmt.Errorf("a %T is not proven", s.Cmd)
}

// redir allows what reads (<, here-documents, here-strings), what copies
// or closes a descriptor (2>&1, >&-) and what discards into /dev/null.
func (p *prover) redir(r *syntax.Redirect) error {
	if r.N != nil && !digits(r.N.Value) {
		return fmt.Errorf("redirection to a named descriptor {%s}", r.N.Value)
	}
	switch r.Op {
	case syntax.RdrIn:
		_, err := p.word(r.Word)
		return err
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		if r.Word != nil {
			if _, err := p.word(r.Word); err != nil {
				return err
			}
		}
		if r.Hdoc != nil {
			if _, err := p.word(r.Hdoc); err != nil {
				return err
			}
		}
		return nil
	case syntax.DplIn, syntax.DplOut:
		w, err := p.word(r.Word)
		if err != nil {
			return err
		}
		if !w.lit() || !(digits(w.val) || w.val == "-") {
			return fmt.Errorf("%s redirects output into a file", r.Op)
		}
		return nil
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll:
		w, err := p.word(r.Word)
		if err != nil {
			return err
		}
		if !w.lit() || w.val != "/dev/null" {
			return fmt.Errorf("%s writes a file", r.Op)
		}
		return nil
	}
	return fmt.Errorf("redirection %s", r.Op)
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// word reads w: its literal value, or how much of it is known. A part
// that runs something (a substitution) must be proven itself; a part the
// prover does not know is an error.
func (p *prover) word(w *syntax.Word) (pword, error) {
	var b strings.Builder
	out := pword{}
	for _, part := range w.Parts {
		k, err := p.part(&b, part, false)
		if err != nil {
			return out, err
		}
		out.kind = max(out.kind, k)
	}
	out.val = b.String()
	return out, nil
}

func (p *prover) part(b *strings.Builder, part syntax.WordPart, dq bool) (wordKind, error) {
	switch x := part.(type) {
	case *syntax.Lit:
		if dq {
			b.WriteString(unescapeDQ(x.Value))
			return wordLit, nil
		}
		return unquotedLit(b, x.Value), nil
	case *syntax.SglQuoted:
		if x.Dollar {
			b.WriteString(ansiC(x.Value))
		} else {
			b.WriteString(x.Value)
		}
		return wordLit, nil
	case *syntax.DblQuoted:
		k := wordLit
		for _, q := range x.Parts {
			qk, err := p.part(b, q, true)
			if err != nil {
				return 0, err
			}
			k = max(k, qk)
		}
		return k, nil
	case *syntax.ParamExp:
		if x.Param == nil || x.Excl || x.Width || x.IsSet || x.Flags != nil || x.NestedParam != nil ||
			x.Index != nil || len(x.Modifiers) > 0 || x.Slice != nil || x.Repl != nil || x.Names != 0 || x.Exp != nil {
			return 0, fmt.Errorf("parameter expansion ${%s...} with an operator", paramName(x))
		}
		if !x.Length && p.loopVars[x.Param.Value] {
			return wordGlob, nil
		}
		return wordDyn, nil
	case *syntax.CmdSubst:
		if x.TempFile || x.ReplyVar {
			return 0, errors.New("a ${ ...; } substitution")
		}
		if err := p.stmts(x.Stmts); err != nil {
			return 0, fmt.Errorf("in a command substitution: %w", err)
		}
		return wordDyn, nil
	case *syntax.ProcSubst:
		if x.Op != syntax.CmdIn {
			return 0, fmt.Errorf("process substitution %s", x.Op)
		}
		if err := p.stmts(x.Stmts); err != nil {
			return 0, fmt.Errorf("in a process substitution: %w", err)
		}
		return wordGlob, nil // a /dev/fd path
	}
	return 0, fmt.Errorf("a %T in a word is not proven", part)
}

func paramName(x *syntax.ParamExp) string {
	if x.Param != nil {
		return x.Param.Value
	}
	return "?"
}

// unquotedLit writes the unquoted literal v with its escapes removed and
// says whether the shell expands it: a glob character, a brace expansion
// or a tilde left unescaped makes the word a pattern.
func unquotedLit(b *strings.Builder, v string) wordKind {
	k := wordLit
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
			continue
		}
		switch c {
		case '*', '?', '{':
			k = wordGlob
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				k = wordGlob
			}
		case '~': // at the start, or after = or : (bash expands both)
			k = wordGlob
		}
		b.WriteByte(c)
	}
	return k
}

// call proves one simple command: a known program, by name (never a
// path), with arguments its checker accepts, and no assignment before it.
func (p *prover) call(c *syntax.CallExpr) error {
	if len(c.Assigns) > 0 {
		return errors.New("an assignment (it may change what runs: PATH, LD_PRELOAD, GIT_*, PAGER, ...)")
	}
	if len(c.Args) == 0 {
		return errors.New("an empty command")
	}
	name, err := p.word(c.Args[0])
	if err != nil {
		return err
	}
	if !name.lit() || name.val == "" {
		return errors.New("the program's name is only known at run time")
	}
	if strings.ContainsRune(name.val, '/') {
		return fmt.Errorf("%s is a program named by its path", name.val)
	}
	args := make([]pword, 0, len(c.Args)-1)
	for _, w := range c.Args[1:] {
		a, err := p.word(w)
		if err != nil {
			return err
		}
		args = append(args, a)
	}
	if !noFileArgs[name.val] {
		script := scriptFirst[name.val] // its first operand is a script or pattern
		for _, a := range args {
			if script && !a.opt() {
				script = false
				continue
			}
			if a.kind != wordDyn && outside(a.val) {
				return fmt.Errorf("%s names a path outside the work dir", a.val)
			}
		}
	}
	return p.program(name.val, args)
}

func (p *prover) program(name string, args []pword) error {
	check, ok := provenPrograms[name]
	if !ok {
		return fmt.Errorf("%s is not a known read-only program", name)
	}
	if err := check(p, args); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// ReadOnly reports whether every command line of the call is proven
// read-only and runs in a sandbox: the call's tool is the executor's tool
// (Options.ExecTool), the executor is sandboxed (Options.Exec.Sandboxed),
// the analysis finds nothing to ask about or refuse, and the proof holds
// (ProveReadOnly, and a clean git config where git or go runs). why says,
// when it is false, the first reason.
func (z *Analyzer) ReadOnly(c *gate.Call) (ok bool, why string) {
	if z.strict != nil && c.Name != z.execTool {
		return false, c.Name + " does not run its commands in the sandbox"
	}
	if !z.pr.exec.Sandboxed {
		return false, "no sandbox runs the command"
	}
	lines := c.Commands()
	if len(lines) == 0 {
		return false, "the call has no command line"
	}
	for _, an := range z.Call(c) {
		if an.Err != nil || an.Decision != gate.Allow {
			return false, "the shell analysis does not allow it: " + an.Summary()
		}
	}
	cwd := z.pr.work
	if c.Tool != nil {
		var dbuf [4]string
		for _, n := range c.ArgsWith(dbuf[:0], tool.RoleDir) {
			if d, ok := c.Str(n); ok && d != "" {
				cwd = resolveDir(z.pr.work, d)
				break
			}
		}
	}
	for _, l := range lines {
		if l.Err != nil {
			return false, "the line does not parse"
		}
		p, err := proveFile(l.File)
		if err != nil {
			return false, err.Error()
		}
		if p.git {
			if cwd == "" {
				return false, "git or go runs in an unknown directory"
			}
			if err := checkGitConfig(cwd); err != nil {
				return false, err.Error()
			}
		}
	}
	return true, ""
}

// noFileArgs are programs that open no file their arguments name.
var noFileArgs = map[string]bool{"echo": true, "printf": true, "basename": true, "dirname": true,
	"seq": true, "true": true, "false": true, "date": true, "type": true, "command": true, "which": true}

// scriptFirst are programs whose first operand is a script or a pattern,
// not a path.
var scriptFirst = map[string]bool{"sed": true, "awk": true, "gawk": true, "mawk": true, "grep": true,
	"egrep": true, "fgrep": true, "rg": true, "jq": true}

// outside reports whether the word, or the value of an option in it
// (--file=/x), names a path outside the work dir: absolute (but for the
// null device and the standard streams), from the home dir, or climbing
// out with "..". The sandbox stops such reads anyway; the proof does not
// rely on it.
func outside(v string) bool {
	if _, val, ok := strings.Cut(v, "="); ok && strings.HasPrefix(v, "-") {
		v = val
	}
	switch v {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "-", "..":
		return v == ".."
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "../") {
		return true
	}
	return strings.Contains(v, "/../") || strings.HasSuffix(v, "/..")
}

func resolveDir(work, d string) string {
	if filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	if work == "" {
		return ""
	}
	return filepath.Join(work, d)
}
