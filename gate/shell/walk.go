package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// dirs is the set of directories a command may run in. Directory changes
// under a condition leave more than one; a change to a directory only known
// at run time leaves it unknown.
type dirs struct {
	list    []string // never mutated in place; replaced on change
	unknown bool
}

const maxDirs = 4

func (d dirs) equal(e dirs) bool {
	if d.unknown || e.unknown {
		return d.unknown == e.unknown
	}
	return slices.Equal(d.list, e.list)
}

func mergeDirs(x, y dirs) dirs {
	if x.unknown || y.unknown {
		return dirs{unknown: true}
	}
	if slices.Equal(x.list, y.list) {
		return x
	}
	out := slices.Clone(x.list)
	for _, d := range y.list {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > maxDirs {
		return dirs{unknown: true}
	}
	return dirs{list: out}
}

// scope is where a statement runs. Copies are cheap; a copy is a subshell.
type scope struct {
	src     string   // source text the positions refer to
	depth   int      // nesting of parsed command strings
	via     []string // wrapper chain, never mutated in place; kept only when commands are recorded
	cwd     dirs
	fn      string // name of the function whose body is walked
	async   bool   // in the background or part of a pipeline
	endless bool   // in the body of an endless loop
}

type inputKind uint8

const (
	inHeredoc inputKind = iota + 1
	inHerestring
	inPipe
	inFile
)

// input is what a command reads on its standard input.
type input struct {
	kind  inputKind
	redir *syntax.Redirect // here-document or here-string
	from  *syntax.Stmt     // producer of a pipe
	file  arg              // the file of an input redirect
	sc    scope            // where the redirect or producer was written
}

func (a *analyzer) walkStmts(ss []*syntax.Stmt, sc *scope) { a.walkStmtsIn(ss, sc, nil) }

func (a *analyzer) walkStmtsIn(ss []*syntax.Stmt, sc *scope, in *input) {
	for _, s := range ss {
		if a.limited {
			return
		}
		a.walkStmt(s, sc, in)
	}
}

func (a *analyzer) walkStmt(s *syntax.Stmt, sc *scope, in *input) {
	if s == nil || !a.tick() {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		if sc.endless {
			a.deny(ruleForkBomb, "starts background processes in an endless loop", source(sc.src, s))
		}
		cp := *sc
		cp.async = true
		sc = &cp
	}
	for _, r := range s.Redirs {
		a.redirect(r, sc, &in, s)
	}
	a.walkCmd(s.Cmd, sc, in)
}

func (a *analyzer) walkCmd(c syntax.Command, sc *scope, in *input) {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		a.callExpr(c, sc, in)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			left := *sc
			left.async = true
			a.walkStmt(c.X, &left, in)
			right := *sc
			right.async = true
			a.walkStmt(c.Y, &right, &input{kind: inPipe, from: c.X, sc: *sc})
			return
		}
		a.walkStmt(c.X, sc, in)
		before := sc.cwd
		a.walkStmt(c.Y, sc, in)
		sc.cwd = mergeDirs(before, sc.cwd)
	case *syntax.Subshell:
		cp := *sc
		a.walkStmtsIn(c.Stmts, &cp, in)
	case *syntax.Block:
		a.walkStmtsIn(c.Stmts, sc, in)
	case *syntax.IfClause:
		a.ifClause(c, sc, in)
	case *syntax.WhileClause:
		a.walkStmtsIn(c.Cond, sc, in)
		a.loopBody(c.Do, sc, in, endless(c))
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				a.walkWord(w, sc)
			}
		case *syntax.CStyleLoop:
			a.arithm(l.Init, sc)
			a.arithm(l.Cond, sc)
			a.arithm(l.Post, sc)
		}
		cs, ok := c.Loop.(*syntax.CStyleLoop)
		a.loopBody(c.Do, sc, in, ok && cs.Cond == nil)
	case *syntax.CaseClause:
		a.walkWord(c.Word, sc)
		start := sc.cwd
		end := start
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				a.walkWord(p, sc)
			}
			sc.cwd = start
			a.walkStmtsIn(it.Stmts, sc, in)
			end = mergeDirs(end, sc.cwd)
		}
		sc.cwd = end
	case *syntax.FuncDecl:
		a.funcDecl(c, sc)
	case *syntax.ArithmCmd:
		a.arithm(c.X, sc)
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			a.arithm(x, sc)
		}
	case *syntax.TestClause:
		a.testExpr(c.X, sc)
	case *syntax.DeclClause:
		a.declClause(c, sc)
	case *syntax.TimeClause:
		a.walkStmt(c.Stmt, sc, in)
	case *syntax.CoprocClause:
		a.walkWord(c.Name, sc)
		cp := *sc
		cp.async = true
		a.walkStmt(c.Stmt, &cp, in)
	case *syntax.TestDecl:
		a.walkWord(c.Description, sc)
		cp := *sc
		a.walkStmt(c.Body, &cp, nil)
	default:
		a.deny(ruleUnsupported, "the command uses shell syntax this check does not know", source(sc.src, c))
	}
}

func (a *analyzer) ifClause(c *syntax.IfClause, sc *scope, in *input) {
	a.walkStmtsIn(c.Cond, sc, in)
	start := sc.cwd
	a.walkStmtsIn(c.Then, sc, in)
	then := sc.cwd
	sc.cwd = start
	if c.Else != nil {
		a.ifClause(c.Else, sc, in)
	}
	sc.cwd = mergeDirs(then, sc.cwd)
}

// loopBody walks a loop body once; a body that changes directory leaves
// the directory unknown, since it may run any number of times.
func (a *analyzer) loopBody(body []*syntax.Stmt, sc *scope, in *input, endless bool) {
	inner := *sc
	inner.endless = sc.endless || endless
	a.walkStmtsIn(body, &inner, in)
	if !inner.cwd.equal(sc.cwd) {
		sc.cwd = dirs{unknown: true}
	}
}

// endless reports a while loop whose condition is always true.
func endless(c *syntax.WhileClause) bool {
	if len(c.Cond) != 1 {
		return false
	}
	ce, ok := c.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) != 1 || c.Cond[0].Negated {
		return false
	}
	switch ce.Args[0].Lit() {
	case "true", ":":
		return !c.Until
	case "false":
		return c.Until
	}
	return false
}

func (a *analyzer) funcDecl(c *syntax.FuncDecl, sc *scope) {
	names := c.Names
	if c.Name != nil {
		names = append([]*syntax.Lit{c.Name}, names...)
	}
	body := *sc
	body.async = false
	body.endless = false
	if len(names) > 0 {
		body.fn = strings.ToLower(names[0].Value)
	}
	a.walkStmt(c.Body, &body, nil)
	if a.funcs == nil {
		a.funcs = make(map[string]*funcInfo)
	}
	for _, n := range names {
		a.funcs[strings.ToLower(n.Value)] = &funcInfo{movesDir: !body.cwd.equal(sc.cwd)}
	}
}

func (a *analyzer) callExpr(c *syntax.CallExpr, sc *scope, in *input) {
	cmd := source(sc.src, c)
	for _, as := range c.Assigns {
		a.assign(as, sc, cmd)
	}
	if len(c.Args) == 0 {
		return
	}
	argv := a.args(c.Args, sc)
	a.simple(argv, sc, in, cmd, false)
	for _, w := range c.Args {
		a.walkWord(w, sc)
	}
}

func (a *analyzer) declClause(c *syntax.DeclClause, sc *scope) {
	cmd := source(sc.src, c)
	for _, as := range c.Args {
		if as.Naked {
			a.walkWord(as.Value, sc)
			if as.Name != nil && as.Name.Value == "HOME" {
				a.homeVar = ""
			}
			continue
		}
		a.assign(as, sc, cmd)
	}
}

func (a *analyzer) assign(as *syntax.Assign, sc *scope, cmd string) {
	a.walkWord(as.Value, sc)
	a.arithm(as.Index, sc)
	if as.Array != nil {
		for _, e := range as.Array.Elems {
			a.arithm(e.Index, sc)
			a.walkWord(e.Value, sc)
		}
	}
	if as.Name == nil {
		return
	}
	val := litArg("")
	if as.Value != nil {
		val = a.word(as.Value, sc)
	} else if as.Array != nil {
		val = arg{val: dynMark, lit: false}
	}
	a.envVar(as.Name.Value, val, sc, cmd)
}

func (a *analyzer) walkWord(w *syntax.Word, sc *scope) {
	if w == nil {
		return
	}
	for _, p := range w.Parts {
		a.walkPart(p, sc)
	}
}

func (a *analyzer) walkPart(p syntax.WordPart, sc *scope) {
	switch p := p.(type) {
	case *syntax.Lit, *syntax.SglQuoted, *syntax.ExtGlob:
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			a.walkPart(q, sc)
		}
	case *syntax.CmdSubst:
		cp := *sc
		a.walkStmts(p.Stmts, &cp)
	case *syntax.ProcSubst:
		cp := *sc
		cp.async = true
		a.walkStmts(p.Stmts, &cp)
	case *syntax.ParamExp:
		if p.NestedParam != nil {
			a.walkPart(p.NestedParam, sc)
		}
		a.arithm(p.Index, sc)
		if p.Slice != nil {
			a.arithm(p.Slice.Offset, sc)
			a.arithm(p.Slice.Length, sc)
		}
		if p.Repl != nil {
			a.walkWord(p.Repl.Orig, sc)
			a.walkWord(p.Repl.With, sc)
		}
		if p.Exp != nil {
			a.walkWord(p.Exp.Word, sc)
		}
	case *syntax.ArithmExp:
		a.arithm(p.X, sc)
	case *syntax.BraceExp:
		for _, e := range p.Elems {
			a.walkWord(e, sc)
		}
	}
}

func (a *analyzer) arithm(x syntax.ArithmExpr, sc *scope) {
	switch x := x.(type) {
	case *syntax.Word:
		a.walkWord(x, sc)
	case *syntax.BinaryArithm:
		a.arithm(x.X, sc)
		a.arithm(x.Y, sc)
	case *syntax.UnaryArithm:
		a.arithm(x.X, sc)
	case *syntax.ParenArithm:
		a.arithm(x.X, sc)
	case *syntax.FlagsArithm:
		a.arithm(x.X, sc)
	}
}

func (a *analyzer) testExpr(x syntax.TestExpr, sc *scope) {
	switch x := x.(type) {
	case *syntax.Word:
		a.walkWord(x, sc)
	case *syntax.BinaryTest:
		a.testExpr(x.X, sc)
		a.testExpr(x.Y, sc)
	case *syntax.UnaryTest:
		a.testExpr(x.X, sc)
	case *syntax.ParenTest:
		a.testExpr(x.X, sc)
	}
}

// redirect judges one redirection and notes what it feeds to stdin.
func (a *analyzer) redirect(r *syntax.Redirect, sc *scope, in **input, st *syntax.Stmt) {
	a.walkWord(r.Word, sc)
	a.walkWord(r.Hdoc, sc)
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		*in = &input{kind: inHeredoc, redir: r, sc: *sc}
		return
	case syntax.WordHdoc:
		*in = &input{kind: inHerestring, redir: r, sc: *sc}
		return
	}
	if r.Word == nil {
		return
	}
	cmd := source(sc.src, st)
	t := a.word(r.Word, sc)
	if a.netPath(t, cmd) {
		return
	}
	switch r.Op {
	case syntax.RdrIn:
		a.readPath(t, sc, cmd)
		*in = &input{kind: inFile, sc: *sc, file: t}
	case syntax.DplIn, syntax.DplOut:
		if isFD(t) {
			return
		}
		if r.Op == syntax.DplIn {
			a.readPath(t, sc, cmd)
			return
		}
		a.writePath(t, sc, cmd, "redirects output to")
	case syntax.RdrInOut:
		a.readPath(t, sc, cmd)
		a.writePath(t, sc, cmd, "opens for writing")
	default:
		a.writePath(t, sc, cmd, "redirects output to")
		a.noteScript(r, t, sc, st)
	}
}

// isFD reports a redirect target that names a file descriptor: 1, 2-, -.
func isFD(t arg) bool {
	if !t.lit || t.val == "" {
		return false
	}
	v := strings.TrimSuffix(t.val, "-")
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// inputText returns the text a command reads on stdin when it can be
// known: the text, whether all of it is literal, and whether it is known.
func (a *analyzer) inputText(in *input) (text string, lit, known bool) {
	if in == nil {
		return "", true, false
	}
	switch in.kind {
	case inHeredoc:
		t, l := hdocText(in.redir)
		return t, l, true
	case inHerestring:
		sc := in.sc
		x := a.word(in.redir.Word, &sc)
		return x.val + "\n", x.lit, true
	case inPipe:
		return a.producerText(in.from, in.sc)
	}
	return "", true, false
}

// producerText returns what echo, printf or cat <<EOF write into a pipe.
func (a *analyzer) producerText(s *syntax.Stmt, sc scope) (string, bool, bool) {
	for s != nil {
		b, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
			break
		}
		s = b.Y
	}
	if s == nil {
		return "", true, false
	}
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 {
		return "", true, false
	}
	argv := a.args(ce.Args, &sc)
	if !argv[0].lit {
		return "", true, false
	}
	lit := true
	var parts []string
	switch cmdName(argv[0].val) {
	case "echo":
		escapes := false
		rest := argv[1:]
		for len(rest) > 0 && rest[0].lit && len(rest[0].val) > 1 && rest[0].val[0] == '-' && strings.Trim(rest[0].val[1:], "neE") == "" {
			escapes = escapes || strings.Contains(rest[0].val, "e")
			rest = rest[1:]
		}
		for _, x := range rest {
			lit = lit && x.lit
			parts = append(parts, x.val)
		}
		text := strings.Join(parts, " ")
		if escapes {
			text = ansiC(text)
		}
		return text + "\n", lit, true
	case "printf":
		rest := argv[1:]
		if len(rest) > 0 && rest[0].val == "--" {
			rest = rest[1:]
		}
		if len(rest) != 1 || !rest[0].lit || strings.Contains(rest[0].val, "%") {
			return "", true, false // formats are not followed
		}
		return ansiC(rest[0].val), true, true
	case "cat":
		if len(argv) == 1 {
			for _, r := range s.Redirs {
				switch r.Op {
				case syntax.Hdoc, syntax.DashHdoc:
					t, l := hdocText(r)
					return t, l, true
				case syntax.WordHdoc:
					x := a.word(r.Word, &sc)
					return x.val + "\n", x.lit, true
				}
			}
		}
	}
	return "", true, false
}

// hdocText returns the body of a here-document and whether it is literal.
func hdocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			switch p := p.(type) {
			case *syntax.SglQuoted, *syntax.DblQuoted:
				quoted = true
			case *syntax.Lit:
				if strings.IndexByte(p.Value, '\\') >= 0 {
					quoted = true
				}
			}
		}
	}
	var b strings.Builder
	lit := true
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			lit = false
			b.WriteString(dynMark)
			continue
		}
		if quoted {
			b.WriteString(l.Value)
			continue
		}
		v := l.Value
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) {
				switch v[i+1] {
				case '$', '`', '\\':
					i++
				case '\n':
					i++
					continue
				}
			}
			b.WriteByte(v[i])
		}
	}
	return b.String(), lit
}
