package approve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/tool"
)

// maxCommands is how many lines the list of shell commands may take.
const maxCommands = 8

// arg is one top-level argument of a call, as shown.
type arg struct {
	name  string
	value string // a string argument's text, else compact JSON
	role  tool.Role
}

// fallbackRoles says what an argument names when the request carries no
// roles (an approver called outside the gates).
var fallbackRoles = map[string]tool.Role{
	"command": tool.RoleCommand, "cmd": tool.RoleCommand, "script": tool.RoleCommand,
	"to": tool.RoleRecipient, "cc": tool.RoleRecipient, "bcc": tool.RoleRecipient, "recipient": tool.RoleRecipient,
	"path": tool.RolePath, "file": tool.RolePath, "src": tool.RolePath, "dst": tool.RolePath, "dest": tool.RolePath,
	"url": tool.RoleURL, "dir": tool.RoleDir, "workdir": tool.RoleDir, "amount": tool.RoleAmount,
}

func roleOf(req Request, name string) tool.Role {
	if req.Roles != nil {
		return req.Roles[name]
	}
	return fallbackRoles[strings.ToLower(name)]
}

// args returns the call's arguments in name order, the decisive ones (those
// with a role) apart from the others. Arguments that are not a JSON object
// are one argument without a name.
func args(req Request) (decisive, other []arg) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(req.Args, &fields); err != nil || fields == nil {
		if len(bytes.TrimSpace(req.Args)) > 0 {
			other = append(other, arg{name: "arguments", value: compact(req.Args)})
		}
		return nil, other
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		a := arg{name: k, value: compact(fields[k]), role: roleOf(req, k)}
		var s string
		if json.Unmarshal(fields[k], &s) == nil {
			a.value = s
		}
		if a.role != 0 {
			decisive = append(decisive, a)
		} else {
			other = append(other, a)
		}
	}
	return decisive, other
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// layout renders the prompt above its question in at most rows lines of
// at most cols-1 columns each, so that none wraps and all of it stays on
// the screen: the call's other arguments first (given up first when rows
// are short), then the tool, the gate, the reason, the shell commands and
// the decisive arguments right above the question.
//
// With a diff, the arguments it is made from (content, old_string,
// new_string) are not listed: the diff follows the path, as many of its
// lines as fit, then a count of those hidden.
func layout(req Request, diff string, cols, rows int, mark DiffMark) string {
	decisive, other := args(req)
	if diff != "" {
		other = slices.DeleteFunc(other, func(a arg) bool { return diffArgs[a.name] })
	}
	var bottom []string // from the tool down to the question
	bottom = append(bottom,
		fit("  tool:    ", req.Tool, cols),
		fit("  gate:    ", req.Gate, cols),
		fit("  reason:  ", req.Reason, cols))
	var runs []string
	for _, a := range decisive {
		if a.role == tool.RoleCommand {
			runs = append(runs, commandLines(a.value, cols)...)
		}
	}
	room := rows - len(bottom) - len(decisive) - 1 // the header
	if len(runs) > maxCommands {
		runs = append(runs[:maxCommands-1], fmt.Sprintf("           (+%d more commands: v shows all)", len(runs)-maxCommands+1))
	}
	if len(runs) > room && room > 0 {
		runs = append(runs[:room-1], fmt.Sprintf("           (+%d more commands: v shows all)", len(runs)-room+1))
	}
	for _, a := range decisive {
		bottom = append(bottom, argLine(a, cols))
		if a.role == tool.RoleCommand {
			bottom = append(bottom, runs...) // the list of every command argument, once
			runs = nil
		}
	}
	if diff != "" {
		lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
		room := rows - len(bottom) - 1 - min(len(other), 2) // the header; keep two other arguments in sight
		if len(lines) > room && room > 0 {
			lines = append(lines[:room-1], fmt.Sprintf("  (+%d more diff lines: v shows all)", len(lines)-room+1))
		} else if room <= 0 {
			lines = []string{fmt.Sprintf("  (a diff of %d lines: v shows it)", len(lines))}
		}
		for _, l := range lines {
			bottom = append(bottom, mark.apply(l, fit(diffIndent(l), strings.TrimLeft(l[min(1, len(l)):], " "), cols)))
		}
	}
	room = rows - len(bottom) - 1
	var top []string
	switch {
	case len(other) <= room:
		for _, a := range other {
			top = append(top, argLine(a, cols))
		}
	case room > 0:
		for _, a := range other[:room-1] {
			top = append(top, argLine(a, cols))
		}
		top = append(top, fmt.Sprintf("  (+%d more arguments: v shows all)", len(other)-room+1))
	}
	var b strings.Builder
	b.WriteString("\n")
	if rows-len(bottom)-len(top) > 0 {
		b.WriteString(fit("", "rein: approval needed", cols) + "\n")
	}
	for _, l := range append(top, bottom...) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// whole renders the whole call, every argument in full (through
// termsafe.Visible, so a run of blanks is a count), for the "v" answer.
func whole(req Request, diff string) string {
	decisive, other := args(req)
	if diff != "" {
		other = slices.DeleteFunc(other, func(a arg) bool { return diffArgs[a.name] })
	}
	var b strings.Builder
	b.WriteString("\nrein: the whole call\n")
	fmt.Fprintf(&b, "  tool:    %s\n  gate:    %s\n  reason:  %s\n",
		termsafe.Visible(req.Tool), termsafe.Visible(req.Gate), termsafe.Visible(req.Reason))
	for _, a := range append(other, decisive...) {
		fmt.Fprintf(&b, "  %s %s\n", pad(termsafe.Visible(a.name)+":", 8), termsafe.Visible(a.value))
		if a.role == tool.RoleCommand {
			for _, l := range commandLines(a.value, 0) {
				b.WriteString(l + "\n")
			}
		}
	}
	if diff != "" {
		for l := range strings.Lines(diff) {
			l = strings.TrimSuffix(l, "\n")
			b.WriteString(diffIndent(l) + termsafe.Visible(strings.TrimLeft(l[min(1, len(l)):], " ")) + "\n")
		}
	}
	return b.String()
}

// maxIndent is the most leading spaces of a diff line shown as spaces.
const maxIndent = 40

// diffIndent is the label of a diff line: two spaces, its mark (+, - or
// space) and its indentation as spaces, so code reads as code; more than
// maxIndent spaces are left to termsafe.Visible to count. What follows
// the indentation is always shown through Visible.
func diffIndent(l string) string {
	if l == "" {
		return "  "
	}
	body := l[1:]
	n := len(body) - len(strings.TrimLeft(body, " "))
	if n > maxIndent {
		n = 0
	}
	return "  " + termsafe.Visible(l[:1]) + strings.Repeat(" ", n)
}

// DiffMark colours a diff line of an approval prompt, already cut to the
// screen and made safe: kind is '+' for an added line, '-' for a removed
// one. It must add only styles (no text), so the prompt's layout holds.
type DiffMark func(kind byte, line string) string

// apply marks shown, the screen's form of diff line l, when l adds or
// removes a line (not the ---/+++ header).
func (m DiffMark) apply(l, shown string) string {
	if m == nil || l == "" || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
		return shown
	}
	if l[0] == '+' || l[0] == '-' {
		return m(l[0], shown)
	}
	return shown
}

// diffArgs are the arguments a diff shows better than their raw text.
var diffArgs = map[string]bool{"content": true, "old_string": true, "new_string": true}

// commandLines lists the simple commands a shell would run for src, one
// per line, bounded to cols (unbounded when cols is 0).
func commandLines(src string, cols int) []string {
	cmds, err := Commands(src)
	line := func(i int, s string) string {
		label := "  runs:    "
		if i > 0 {
			label = "           "
		}
		if cols == 0 {
			return label + termsafe.Visible(s)
		}
		return fit(label, s, cols)
	}
	if err != nil {
		return []string{line(0, "(the shell cannot parse it: "+err.Error()+")")}
	}
	if len(cmds) == 0 {
		return []string{line(0, "(no command)")}
	}
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = line(i, c)
	}
	return out
}

// Commands splits a shell command line into the simple commands it runs,
// in source order, with their redirections, as the shell parser (bash
// syntax) reads them: comments are gone, and commands inside
// substitutions, pipelines and compound commands are listed on their own.
func Commands(src string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, err
	}
	printer := syntax.NewPrinter(syntax.SingleLine(true))
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		if _, simple := st.Cmd.(*syntax.CallExpr); !simple && st.Cmd != nil {
			return true
		}
		var b strings.Builder
		one := *st
		one.Comments = nil
		one.Semicolon = syntax.Pos{}
		if err := printer.Print(&b, &one); err == nil {
			out = append(out, strings.TrimSpace(b.String()))
		}
		return true // substitutions inside its words are commands too
	})
	return out, nil
}

// argLine renders one argument as "  name: value" on one line.
func argLine(a arg, cols int) string {
	name := termsafe.Visible(a.name)
	if strWidth(name) > 24 {
		name = cutWidth(name, 23) + "…"
	}
	return fit("  "+pad(name+":", 8)+" ", a.value, cols)
}

func pad(s string, n int) string {
	if w := strWidth(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}

// fit renders label and value (made visible) on one line of at most cols-1
// columns; a value cut short ends with a marker of how much is hidden.
func fit(label, value string, cols int) string {
	v := termsafe.Visible(value)
	avail := cols - 1 - strWidth(label)
	if strWidth(v) <= avail {
		return label + v
	}
	total := utf8.RuneCountInString(v)
	marker := func(hidden int) string { return fmt.Sprintf(" …[+%d chars hidden: v shows all]", hidden) }
	if avail-strWidth(marker(total)) < 20 { // a narrow terminal: the value first
		marker = func(hidden int) string { return fmt.Sprintf("…[+%d]", hidden) }
	}
	room := max(avail-strWidth(marker(total)), 1)
	head := cutWidth(v, room)
	return label + head + marker(total-utf8.RuneCountInString(head))
}

// cutWidth returns the longest prefix of s that takes at most w columns.
func cutWidth(s string, w int) string {
	used := 0
	for i, r := range s {
		rw := runeWidth(r)
		if used+rw > w {
			return s[:i]
		}
		used += rw
	}
	return s
}

func strWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth is how many columns a terminal gives r: two for East Asian wide
// and full-width characters, none for combining marks, else one.
func runeWidth(r rune) int {
	switch {
	case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
