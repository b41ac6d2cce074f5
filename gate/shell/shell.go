package shell

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/protect"
)

// Limits on what is judged. Beyond them a command line is refused.
const (
	// MaxInput is the largest command line judged, in bytes.
	MaxInput = cmdline.MaxInput
	// MaxDepth bounds nested shell strings (bash -c "bash -c '...'", eval,
	// here-documents fed to a shell, substitutions).
	MaxDepth = 8
	// maxParses bounds the number of nested strings parsed for one line.
	maxParses = 64
	// maxNodes bounds the statements and words walked for one line.
	maxNodes = 20000
	// maxBraceWords bounds the words one brace expansion may produce.
	maxBraceWords = 256
)

// Sentinel errors recorded in Analysis.Err.
var (
	// ErrTooLarge marks a command line over MaxInput bytes.
	ErrTooLarge = cmdline.ErrTooLarge
	// ErrTooDeep marks nesting beyond MaxDepth or too much work.
	ErrTooDeep = errors.New("command line too deeply nested to check")
)

// Options says where commands run.
type Options struct {
	WorkDir string // absolute path of the work dir; relative paths in commands are relative to it
	Home    string // the user's home for ~ and $HOME expansion; "" means unknown (treat ~ as outside)
	// Protected lists the paths (relative to the work dir) a write to which
	// asks: files that run code or change rights later. nil means
	// protect.Default(); a list can extend the default, never shrink it.
	Protected *protect.List
	// Exec is what the executor that runs the commands lets them do; the
	// zero value, no sandbox, is the strictest reading.
	Exec Executor
	// ExecTool names the one tool whose commands run in Exec's executor
	// (the session's run_bash). A call of any other tool with a command
	// argument (a caller's tool, an MCP tool given the command role) runs
	// where rein cannot see, so it is judged as unsandboxed: the zero
	// Executor. Empty means Exec applies to every call.
	ExecTool string
}

// Command is one simple command found in a command line.
type Command struct {
	Name    string   // resolved command name: basename of the literal word ("/usr/bin/curl" -> "curl"); "" if not literal
	Program string   // the literal program word as written ("./go", "/usr/bin/curl", "go"); "" if not literal
	Args    []string // the literal argument words after the name, quotes removed; a non-literal word is recorded as "" and sets Dynamic
	Dynamic bool     // the name or an argument is built from variables, substitutions, globs-with-vars...
	// Unknown[i] says Args[i] is only known at run time (and may stand for
	// any number of words); nil when no argument is.
	Unknown []bool
	Via     []string // wrapper chain it was found inside, outermost first, e.g. ["sudo", "bash -c"]
}

// Finding is one reason to refuse or to ask.
type Finding struct {
	Decision gate.Decision // gate.Deny or gate.Ask
	Rule     string        // stable short id, e.g. "net-tool"; Rules lists them all
	Reason   string        // precise, for humans and the audit log
	Command  string        // the offending command, as written

	id ruleID // Rule, as registered in the rule table
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s: %s (%s)", f.Decision, f.Rule, f.Reason, f.Command)
}

// Analysis is the judgement of one command line.
type Analysis struct {
	Decision gate.Decision // Deny if any Deny finding, else Ask if any Ask finding, else Allow
	Commands []Command     // every simple command found anywhere, in source order
	Findings []Finding
	Err      error // parse error or limit (then Decision is Deny)
}

// Summary returns one line: the decision and the rules that fired.
func (a Analysis) Summary() string {
	if len(a.Findings) == 0 {
		return a.Decision.String()
	}
	var b strings.Builder
	b.WriteString(a.Decision.String())
	b.WriteString(":")
	seen := make(map[string]bool, len(a.Findings))
	for _, f := range a.Findings {
		if seen[f.Rule] {
			continue
		}
		seen[f.Rule] = true
		b.WriteString(" ")
		b.WriteString(f.Rule)
	}
	return b.String()
}

// Rules returns the distinct rule ids of the findings, in order.
func (a Analysis) Rules() []string {
	var rules []string
	for _, f := range a.Findings {
		dup := false
		for _, r := range rules {
			if r == f.Rule {
				dup = true
				break
			}
		}
		if !dup {
			rules = append(rules, f.Rule)
		}
	}
	return rules
}

// Analyze parses src as bash and judges every command in it.
func Analyze(src string, o Options) Analysis {
	pr := prepare(o)
	return analyzeWith(cmdline.Line{Src: src}, &pr, newAnalyzer(newParser()), "", true)
}

// newParser returns the parser nested command strings are read with, the
// one gate.Call.Commands reads command lines with.
func newParser() *syntax.Parser { return cmdline.NewParser() }

// prepared is what every analysis under the same Options starts from,
// worked out once.
type prepared struct {
	work, home string // cleaned WorkDir and Home, "" when unknown
	start      dirs   // the work dir as the first working directory
	protect    *protect.List
	heads      protectHeads // a cheap test that a path cannot be protected
	exec       Executor     // Options.Exec, its writable roots cleaned
}

func prepare(o Options) prepared {
	pr := prepared{protect: o.Protected}
	if pr.protect == nil {
		pr.protect = protect.Default()
	}
	pr.heads = newProtectHeads(pr.protect)
	pr.exec = o.Exec.prepared()
	if o.WorkDir != "" && filepath.IsAbs(o.WorkDir) {
		pr.work = filepath.Clean(o.WorkDir)
	}
	if o.Home != "" && filepath.IsAbs(o.Home) {
		pr.home = filepath.Clean(o.Home)
	}
	pr.start = dirs{unknown: true}
	if pr.work != "" {
		pr.start = dirs{list: []string{pr.work}} // shared: dirs.list is never mutated in place
	}
	return pr
}

// analyzeWith judges the command line l with an analyzer the caller owns,
// run in dir (relative to the work dir; "" is the work dir); a panic inside
// the analysis denies. l is walked as parsed (gate.Call.Commands); a Line
// with neither a tree nor an error is parsed here. commands says whether
// to list the simple commands in the Analysis.
func analyzeWith(l cmdline.Line, pr *prepared, a *analyzer, dir string, commands bool) (res Analysis) {
	defer func() {
		if r := recover(); r != nil {
			res = Analysis{Decision: gate.Deny, Err: fmt.Errorf("shell analysis failed: %v", r),
				Findings: []Finding{{Decision: gate.Deny, Rule: ruleInternalError.String(), id: ruleInternalError,
					Reason: fmt.Sprintf("the analysis failed (%v), so the command is refused", r), Command: clip(l.Src)}}}
		}
	}()
	return analyzeIn(l, pr, a, dir, commands)
}

// analyze is analyzeWith without the recover, for the fuzzer.
func analyze(src string, o Options, p *syntax.Parser) Analysis {
	pr := prepare(o)
	return analyzeIn(cmdline.Line{Src: src}, &pr, newAnalyzer(p), "", true)
}

func analyzeIn(l cmdline.Line, pr *prepared, a *analyzer, dir string, commands bool) Analysis {
	src := l.Src
	a.reset(pr, commands)
	if len(src) > MaxInput {
		a.res.Err = fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(src), MaxInput)
		a.deny(ruleTooLarge, fmt.Sprintf("the command line is %d bytes, over the %d-byte limit", len(src), MaxInput), clip(src))
		return a.finish()
	}
	f, err := l.File, l.Err
	if f == nil && err == nil {
		f, err = a.parse(src)
	}
	if err != nil {
		a.res.Err = fmt.Errorf("parse: %w", err)
		a.deny(ruleParseError, "the command line does not parse: "+err.Error(), clip(src))
		return a.finish()
	}
	sc := &scope{src: src, cwd: a.start}
	if dir != "" {
		a.cd([]arg{litArg("cd"), litArg(dir)}, sc)
	}
	a.walkStmts(f.Stmts, sc)
	return a.finish()
}

// analyzer holds the state of one analysis. It is not shared.
type analyzer struct {
	work    string // cleaned WorkDir, "" when unknown
	home    string // cleaned Home, "" when unknown
	protect *protect.List
	heads   *protectHeads
	exec    Executor // what the executor lets the commands do
	// homeVar is the value $HOME is taken to have: home, unless the line
	// assigns or unsets HOME, then "" (unknown).
	homeVar string
	p       *syntax.Parser
	rd      strings.Reader // what p reads; reset for every parse
	start   dirs           // where the line starts
	res     Analysis
	// commands says whether to record the simple commands in res.
	commands bool
	funcs    map[string]*funcInfo
	scripts  map[string]script // files written in this line, by absolute path
	cdPath   bool              // CDPATH was set: relative cd targets may go anywhere
	cdVars   bool              // cdable_vars may be on: cd targets may be variables
	parses   int
	nodes    int
	limited  bool
	arena    // buffers kept from one analysis to the next
}

type funcInfo struct {
	movesDir bool // the body changes the working directory
}

// parse parses text with the analyzer's parser. Parse reads all of its
// input before it returns, so one reader serves every parse.
func (a *analyzer) parse(text string) (*syntax.File, error) {
	a.rd.Reset(text)
	return a.p.Parse(&a.rd, "")
}

func (a *analyzer) finish() Analysis {
	d := gate.Allow
	for _, f := range a.res.Findings {
		if f.Decision == gate.Deny {
			d = gate.Deny
			break
		}
		if f.Decision == gate.Ask {
			d = gate.Ask
		}
	}
	if a.res.Err != nil {
		d = gate.Deny
	}
	a.res.Decision = d
	return a.res
}

func (a *analyzer) add(d gate.Decision, id ruleID, reason, cmd string) {
	if a.stopped(id) {
		return // the sandbox stops it: judged as the sandbox will
	}
	for _, f := range a.res.Findings {
		if f.id == id && f.Reason == reason && f.Command == cmd {
			return
		}
	}
	a.res.Findings = append(a.res.Findings, Finding{Decision: d, Rule: id.String(), Reason: reason, Command: clip(cmd), id: id})
}

func (a *analyzer) deny(id ruleID, reason, cmd string) { a.add(gate.Deny, id, reason, cmd) }
func (a *analyzer) ask(id ruleID, reason, cmd string)  { a.add(gate.Ask, id, reason, cmd) }

// tick counts work; past the budget the line is refused and walking stops.
func (a *analyzer) tick() bool {
	a.nodes++
	if a.nodes > maxNodes {
		a.tooDeep("the command line is too complex to check")
		return false
	}
	return !a.limited
}

func (a *analyzer) tooDeep(reason string) {
	if !a.limited {
		a.limited = true
		a.res.Err = fmt.Errorf("%w: %s", ErrTooDeep, reason)
		a.deny(ruleTooDeep, reason, "")
	}
}

// nested parses text as shell and walks it as if it ran where sc runs.
// shared means the text runs in the same shell (eval, source): directory
// changes inside it carry on after it. soft drops parse errors (for text
// only guessed to be shell, like string literals of a script).
func (a *analyzer) nested(text string, sc *scope, via string, shared, soft bool, cmd string) {
	if sc.depth+1 > MaxDepth {
		a.tooDeep(fmt.Sprintf("commands are nested more than %d levels deep", MaxDepth))
		return
	}
	a.parses++
	if a.parses > maxParses {
		a.tooDeep("too many nested command strings to check")
		return
	}
	if len(text) > MaxInput {
		a.deny(ruleTooLarge, "a nested command string is over the size limit", cmd)
		return
	}
	f, err := a.parse(text)
	if err != nil {
		if !soft {
			a.deny(ruleParseError, fmt.Sprintf("the command string run by %s does not parse: %v", via, err), cmd)
		}
		return
	}
	inner := *sc
	inner.src = text
	inner.depth++
	inner.via = a.appendVia(sc.via, via)
	a.walkStmts(f.Stmts, &inner)
	if shared {
		sc.cwd = inner.cwd
	}
}

// appendVia returns via with v added, for Command.Via: nil when the
// commands are not recorded, since nothing else reads the chain.
func (a *analyzer) appendVia(via []string, v string) []string {
	if !a.commands {
		return nil
	}
	out := make([]string, len(via), len(via)+1)
	copy(out, via)
	return append(out, v)
}

// clip shortens text for a finding.
func clip(s string) string {
	const max = 300
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
