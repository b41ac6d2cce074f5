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
	args  []arg     // backing of every argv of one analysis
	paths []string  // backing of resolve's results
	opts  []opt     // backing of parseOpts's options (its operands go in args)
	finds []Finding // the findings, when the caller lends them back (lend)
	// lend says the caller reads the Analysis's findings only until it
	// releases the analyzer (the gate, which turns them into a verdict), so
	// they may live in finds and be reused.
	lend bool
}

// Buffers past these capacities are dropped after an analysis rather than
// kept, so that one huge command line does not pin memory in the pool.
const (
	maxKeptArgs  = 1024
	maxKeptPaths = 256
	maxKeptFinds = 64
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
	if ar.lend {
		a.res.Findings = ar.finds[:0]
	}
}

// release ends a lent analysis: the findings buffer, possibly grown, is
// kept for the next one. The caller must be done with the findings.
func (a *analyzer) release() {
	if !a.lend {
		return
	}
	fs := a.res.Findings
	clear(fs) // drop the strings they hold
	a.finds = trim(fs, maxKeptFinds)
	a.res.Findings = nil
	a.lend = false
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
