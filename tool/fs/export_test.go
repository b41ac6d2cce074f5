package fs

import "strings"

// MatchForTest reports whether the glob pattern matches the "/"-separated
// name; ok is false when the pattern is refused.
func MatchForTest(pattern, name string) (matched, ok bool) {
	g, err := compileGlob(pattern)
	if err != nil {
		return false, false
	}
	return g.match(strings.Split(name, "/")), true
}
