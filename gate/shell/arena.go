package shell

import "mvdan.cc/sh/v3/syntax"

// arena holds the buffers an analyzer keeps from one analysis to the next,
// so that the gate, which pools its analyzers, allocates little beyond the
// parser's nodes on every call.
//
// Slices handed out of args and paths are capped (s[i:j:j]), so an append
// to one copies instead of writing over the next; nothing that outlives the
// analysis (the Analysis returned) points into them.
type arena struct {
	args  []arg    // backing of every argv of one analysis
	paths []string // backing of resolve's results
	opts  []opt    // backing of parseOpts's options (its operands go in args)
}

// Buffers past these capacities are dropped after an analysis rather than
// kept, so that one huge command line does not pin memory in the pool.
const (
	maxKeptArgs  = 1024
	maxKeptPaths = 256
)

// newAnalyzer returns an analyzer that parses with p.
func newAnalyzer(p *syntax.Parser) *analyzer { return &analyzer{p: p} }

// reset readies a for a new analysis under pr, keeping its parser, its maps
// (emptied) and its buffers.
func (a *analyzer) reset(pr *prepared, commands bool) {
	ar := a.arena
	ar.args = trim(ar.args, maxKeptArgs)
	ar.paths = trim(ar.paths, maxKeptPaths)
	ar.opts = trim(ar.opts, maxKeptArgs)
	funcs, scripts := a.funcs, a.scripts
	clear(funcs)
	clear(scripts)
	*a = analyzer{p: a.p, work: pr.work, protect: pr.protect, heads: &pr.heads, exec: pr.exec, home: pr.home, homeVar: pr.home, start: pr.start, commands: commands,
		funcs: funcs, scripts: scripts, arena: ar}
}

// trim empties s for reuse, clearing what it held; a slice grown past
// limit is dropped.
func trim[T any](s []T, limit int) []T {
	if cap(s) > limit {
		return nil
	}
	clear(s)
	return s[:0]
}

// keepArgs returns the args appended to the arena since start, capped.
func (a *analyzer) keepArgs(start int) []arg {
	return a.arena.args[start:len(a.arena.args):len(a.arena.args)]
}

// keepPaths returns the paths appended to the arena since start, capped.
func (a *analyzer) keepPaths(start int) []string {
	return a.arena.paths[start:len(a.arena.paths):len(a.arena.paths)]
}
