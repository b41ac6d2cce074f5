package shell

import (
	"strings"
	"sync"
)

// opt is one option of a parsed command line.
type opt struct {
	name string // "-x" or "--name"
	val  arg    // the value, when the option takes one
	has  bool   // a value was given
}

// parsed is a command line split into options and operands.
type parsed struct {
	opts []opt
	ops  []arg // operands, in order
	rest int   // with stop: index of the first operand (the wrapped command)
}

// parseOpts splits argv[from:] into options and operands, getopt style.
// short lists the short options that take a value; long lists long options
// (without "--") that take a value when not written --name=value. With stop
// it stops at the first operand, as wrappers do before their command.
// The options and operands live in the analyzer's arena.
func (a *analyzer) parseOpts(argv []arg, from int, short string, long []string, stop bool) parsed {
	o0, a0 := len(a.arena.opts), len(a.arena.args)
	rest := a.scanOpts(argv, from, short, long, stop)
	return parsed{
		opts: a.arena.opts[o0:len(a.arena.opts):len(a.arena.opts)],
		ops:  a.arena.args[a0:len(a.arena.args):len(a.arena.args)],
		rest: rest,
	}
}

// scanOpts appends the options and operands parseOpts finds to the arena
// and returns the index of the first operand (with stop) or len(argv).
func (a *analyzer) scanOpts(argv []arg, from int, short string, long []string, stop bool) int {
	for i := from; i < len(argv); i++ {
		x := argv[i]
		v := x.val
		if !x.lit || len(v) < 2 || v[0] != '-' {
			if stop {
				return i
			}
			a.arena.args = append(a.arena.args, x)
			continue
		}
		if v == "--" {
			if stop {
				return i + 1
			}
			a.arena.args = append(a.arena.args, argv[i+1:]...)
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v, "=")
			o := opt{name: name}
			if eq {
				o.val, o.has = litArg(val), true
			} else if contains(long, name[2:]) && i+1 < len(argv) {
				i++
				o.val, o.has = argv[i], true
			}
			a.arena.opts = append(a.arena.opts, o)
			continue
		}
		for j := 1; j < len(v); j++ {
			c := v[j]
			o := opt{name: shortOpts()[c]}
			if strings.IndexByte(short, c) >= 0 {
				if j+1 < len(v) {
					o.val, o.has = litArg(v[j+1:]), true
				} else if i+1 < len(argv) {
					i++
					o.val, o.has = argv[i], true
				}
				a.arena.opts = append(a.arena.opts, o)
				break
			}
			a.arena.opts = append(a.arena.opts, o)
		}
	}
	return len(argv)
}

// shortOpts names the short option of every byte, "-" + string(rune(c)),
// made once rather than for every letter of every option.
var shortOpts = sync.OnceValue(func() *[256]string {
	var t [256]string
	for c := range t {
		t[c] = "-" + string(rune(c))
	}
	return &t
})

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// has reports whether any of the options was given.
func (p parsed) has(names ...string) bool {
	for _, o := range p.opts {
		if contains(names, o.name) {
			return true
		}
	}
	return false
}

// value returns the last value of any of the options.
func (p parsed) value(names ...string) (arg, bool) {
	var v arg
	found := false
	for _, o := range p.opts {
		if o.has && contains(names, o.name) {
			v, found = o.val, true
		}
	}
	return v, found
}

// values returns every value of the options, in order.
func (p parsed) values(names ...string) []arg {
	var vs []arg
	for _, o := range p.opts {
		if o.has && contains(names, o.name) {
			vs = append(vs, o.val)
		}
	}
	return vs
}

// firstOperand returns the index of the first argument of argv[from:] that
// does not start with "-", or len(argv).
func firstOperand(argv []arg, from int) int {
	for i := from; i < len(argv); i++ {
		if !argv[i].lit || !strings.HasPrefix(argv[i].val, "-") || argv[i].val == "-" {
			return i
		}
	}
	return len(argv)
}
