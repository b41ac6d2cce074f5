// Package udiff renders the change from one text to another as a unified
// diff (the format of diff -u and git diff), so that a person approving a
// file write or edit sees what it changes, not only what it writes.
//
// The line diff is Myers' O(ND) algorithm; past MaxEdits edits it gives up
// finding the shortest one and shows the rest as replaced, so a huge or
// hostile input cannot make an approval prompt slow.
package udiff

import (
	"fmt"
	"strings"
)

// Context is how many unchanged lines surround each change.
const Context = 3

// MaxEdits bounds the search for the shortest edit script.
const MaxEdits = 1000

// Line is one line of a diff: ' ' kept, '-' removed, '+' added; Text has
// no line ending.
type Line struct {
	Op   byte
	Text string
}

// Hunk is a run of changes with their context: the 1-based first line and
// the line count in the old text and in the new.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []Line
}

// Header is the hunk's "@@ -a,b +c,d @@" line.
func (h Hunk) Header() string {
	return fmt.Sprintf("@@ -%s +%s @@", span(h.OldStart, h.OldLines), span(h.NewStart, h.NewLines))
}

func span(start, n int) string {
	if n == 0 {
		start-- // an empty range names the line before it, as diff -u does
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// Lines splits text into lines without their endings; a final line
// without a newline is a line too.
func Lines(text string) []string {
	if text == "" {
		return nil
	}
	ls := strings.SplitAfter(text, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\n")
	}
	return ls
}

// Hunks returns the changes from old to new, grouped with Context lines
// around them; none when the texts have the same lines.
func Hunks(old, new string) []Hunk {
	a, b := Lines(old), Lines(new)
	return group(edits(a, b))
}

// noEOL marks, inside the diff, a last line without a newline: such a
// line differs from the same text with one, as in diff -u.
const noEOL = "\x00"

// Unified renders the diff from old to new as diff -u does, with the
// path in the --- and +++ lines; "" when nothing changes. A text that
// does not end in a newline gets "\ No newline at end of file" after its
// last line.
func Unified(path, old, new string) string {
	if old == new {
		return ""
	}
	hunks := group(edits(marked(old), marked(new)))
	var b strings.Builder
	from := "a/" + path
	if old == "" {
		from = "/dev/null"
	}
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, "b/"+path)
	for _, h := range hunks {
		b.WriteString(h.Header() + "\n")
		for _, l := range h.Lines {
			text, cut := strings.CutSuffix(l.Text, noEOL)
			b.WriteByte(l.Op)
			b.WriteString(text)
			b.WriteByte('\n')
			if cut {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
	}
	return b.String()
}

// marked is Lines(text) with noEOL on a last line that has no newline.
func marked(text string) []string {
	ls := Lines(text)
	if len(ls) > 0 && !strings.HasSuffix(text, "\n") {
		ls[len(ls)-1] += noEOL
	}
	return ls
}

// edits returns the edit script from a to b, line by line.
func edits(a, b []string) []Line {
	// Common head and tail first: most edits touch a few lines of a file.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []Line
	for _, l := range a[:pre] {
		out = append(out, Line{' ', l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, Line{' ', l})
	}
	return out
}

// myers is the shortest edit script from a to b (Myers 1986), or, past
// MaxEdits, all of a removed and all of b added.
func myers(a, b []string) []Line {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaced(a, b)
	}
	maxD := min(n+m, MaxEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		// Only the diagonals -d..d can have been reached: save those.
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace, d)
			}
		}
	}
	return replaced(a, b)
}

// backtrack walks the saved frontiers from the end back to the start.
func backtrack(a, b []string, trace [][]int, d int) []Line {
	x, y := len(a), len(b)
	var rev []Line
	for ; d > 0; d-- {
		v := trace[d]
		at := func(k int) int { return v[k+d+1] } // trace[d] starts at diagonal -d-1
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, Line{' ', a[x]})
		}
		if x == prevX {
			y--
			rev = append(rev, Line{'+', b[y]})
		} else {
			x--
			rev = append(rev, Line{'-', a[x]})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, Line{' ', a[x]})
	}
	out := make([]Line, len(rev))
	for i, l := range rev {
		out[len(rev)-1-i] = l
	}
	return out
}

func replaced(a, b []string) []Line {
	out := make([]Line, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, Line{'-', l})
	}
	for _, l := range b {
		out = append(out, Line{'+', l})
	}
	return out
}

// group cuts an edit script into hunks with Context lines around changes;
// changes closer than 2*Context lines share a hunk.
func group(script []Line) []Hunk {
	// oldNo[i], newNo[i]: the 1-based old and new line numbers at script[i].
	oldNo, newNo := make([]int, len(script)+1), make([]int, len(script)+1)
	o, n := 1, 1
	for i, l := range script {
		oldNo[i], newNo[i] = o, n
		if l.Op != '+' {
			o++
		}
		if l.Op != '-' {
			n++
		}
	}
	oldNo[len(script)], newNo[len(script)] = o, n
	var hunks []Hunk
	for i := 0; i < len(script); {
		if script[i].Op == ' ' {
			i++
			continue
		}
		start := max(i-Context, 0)
		end := i
		for end < len(script) {
			if script[end].Op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(script) && script[run].Op == ' ' {
				run++
			}
			if run == len(script) || run-end > 2*Context {
				end = min(end+Context, len(script))
				break
			}
			end = run
		}
		h := Hunk{OldStart: oldNo[start], NewStart: newNo[start], Lines: append([]Line(nil), script[start:end]...)}
		h.OldLines = oldNo[end] - oldNo[start]
		h.NewLines = newNo[end] - newNo[start]
		hunks = append(hunks, h)
		i = end
	}
	return hunks
}
