package main

import (
	"strings"

	"github.com/alecthomas/kong"
)

// unknownCommand checks the first argument: a word that is not one of
// rein's commands is an unknown command (rein with no command is the
// conversation, which takes flags only, so a word there is never a task),
// with the closest command name as a suggestion.
func unknownCommand(app *kong.Application, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil
	}
	word := args[0]
	var names []string
	for _, n := range app.Children {
		if n.Type != kong.CommandNode || n.Hidden {
			continue
		}
		if n.Name == word {
			return nil
		}
		for _, a := range n.Aliases {
			if a == word {
				return nil
			}
		}
		names = append(names, n.Name)
	}
	if best, ok := closest(word, names); ok {
		return usagef("unknown command %q; did you mean %q?", word, best)
	}
	return usagef("unknown command %q; the commands are %s (see rein --help)", word, strings.Join(names, ", "))
}

// closest returns the name nearest to word by edit distance, when it is
// near enough to be a slip: at most 2 edits, and fewer than half the word.
func closest(word string, names []string) (string, bool) {
	best, bestD := "", -1
	for _, n := range names {
		d := editDistance(strings.ToLower(word), n)
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if bestD < 0 || bestD > 2 || (bestD == 2 && len(word) < 4) {
		return "", false
	}
	return best, true
}

// editDistance is the optimal-string-alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and swaps of two
// neighbours ("rnu" for "run") cost one each.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
