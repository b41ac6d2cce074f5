package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// script is a file written earlier in the same command line.
type script struct {
	text  string
	known bool // the whole content is known literal text
}

// noteScript remembers what a redirect writes into a file, so that a later
// "bash file" or "./file" in the same line is judged by its content.
func (a *analyzer) noteScript(r *syntax.Redirect, t arg, sc *scope, st *syntax.Stmt) {
	if !t.lit {
		return
	}
	ps, _ := a.resolve(t.val, sc)
	if len(ps) == 0 {
		return
	}
	text, lit, known := "", false, false
	if r.N == nil || r.N.Value == "1" || r.Op == syntax.RdrAll || r.Op == syntax.AppAll {
		text, lit, known = a.producerText(st, *sc)
	}
	appendTo := r.Op == syntax.AppOut || r.Op == syntax.AppAll || r.Op == syntax.AppClob || r.Op == syntax.AppAllClob
	if a.scripts == nil {
		a.scripts = make(map[string]script)
	}
	for _, p := range ps {
		if strings.Contains(p, "/.git/hooks/") {
			// Writing it asks (protected-path); what it would run is judged too.
			if known && lit {
				a.nested(text, sc, "git hook", false, true, source(sc.src, st))
			}
		}
		s := script{text: text, known: known && lit}
		if prev, ok := a.scripts[p]; ok && appendTo {
			s.text = prev.text + text
			s.known = prev.known && s.known
		}
		a.scripts[p] = s
	}
}

// scriptAt returns the content of a file written earlier in this line.
func (a *analyzer) scriptAt(f arg, sc *scope) (text string, found, known bool) {
	if !f.lit || len(a.scripts) == 0 {
		return "", false, false
	}
	ps, _ := a.resolve(f.val, sc)
	for _, p := range ps {
		if s, ok := a.scripts[p]; ok {
			return s.text, true, s.known
		}
	}
	return "", false, false
}

// runScript judges running a file written earlier in this line.
func (a *analyzer) runScript(name, text string, known bool, sc *scope, cmd string, shared bool) {
	if !known {
		a.ask(ruleDynamicCommand, "runs "+name+", written in this command line with content only known at run time", cmd)
		return
	}
	a.nested(text, sc, name, shared, false, cmd)
}
