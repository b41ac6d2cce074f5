package cmdline

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Simple returns the words of src when src is one simple command that bash
// runs exactly as written: a single command with no operator, redirection,
// assignment or background; every word literal after quote removal (no
// parameter, substitution, arithmetic, glob, brace or tilde, and no
// backslash, whose rules are left to the shell); and a name that is not
// one of bash's builtins. `bash -c` runs such a line by exec'ing its words
// in place of itself, so a caller may exec them directly and skip the
// shell's start. `true` and `false` with no argument are the one
// exception to the builtin rule: their programs do what the builtins do.
// A line that starts with - or + is not simple (`bash -c` reads it as
// options), nor one with anything after its first newline (bash forks
// then), nor one whose name is a reserved word.
// ok is false for anything else, and for a line that does not parse.
func Simple(src string) (words []string, ok bool) {
	if len(src) > MaxInput || hasControl(src) || strings.HasPrefix(src, "-") || strings.HasPrefix(src, "+") ||
		strings.Contains(strings.TrimSuffix(src, "\n"), "\n") {
		// bash -c takes a line that starts with - or + for options; and
		// bash execs in place of itself only when nothing follows the
		// command, not even a blank line or a comment: it forks.
		return nil, false
	}
	f, err := NewParser().Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || st.Disown || len(st.Redirs) > 0 {
		return nil, false
	}
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	words = make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		v, lit := simpleWord(w)
		if !lit {
			return nil, false
		}
		words = append(words, v)
	}
	if isBuiltin(words[0]) {
		if len(words) > 1 || (words[0] != "true" && words[0] != "false") {
			return nil, false
		}
	}
	if words[0] == "" || words[0][0] == '%' || isReserved(words[0]) {
		// %1, %foo: bash resumes a job (fg). A reserved word the parser
		// took for a name (else, in) is a syntax error to bash.
		return nil, false
	}
	return words, true
}

// hasControl says whether src has a control character other than tab
// and newline: where the parser and bash may disagree (bash takes a
// carriage return as part of a word).
func hasControl(src string) bool {
	for i := 0; i < len(src); i++ {
		if c := src[i]; (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
			return true
		}
	}
	return false
}

// simpleWord returns w's value when quote removal is all that bash does to
// it.
func simpleWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			// Unquoted: no glob (*?[), brace ({}), tilde (~, also after
			// = and :), escape (\) or anything else bash would act on.
			if strings.ContainsAny(p.Value, "*?[]{}~\\$`!") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar { // $'...': escapes
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar { // $"...": translated
				return "", false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, "\\$`") {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// isReserved says whether name is one of bash's reserved words.
func isReserved(name string) bool {
	switch name {
	case "!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in",
		"select", "then", "time", "until", "while", "{", "}", "[[", "]]":
		return true
	}
	return false
}

// isBuiltin says whether bash 5.2 runs name itself (`compgen -b`) rather
// than as a program.
func isBuiltin(name string) bool {
	switch name {
	case ".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command",
		"compgen", "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable",
		"eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history",
		"jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read",
		"readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend", "test",
		"times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait":
		return true
	}
	return false
}
