package shell

import "path/filepath"

// Executor says what the executor that will run the commands lets them do,
// so that a rule can judge a command as the sandbox will: a connection
// that the sandbox stops is no exfiltration risk, and a write into a
// directory private to the sandbox is not a write outside the work dir.
// The zero value is the strictest reading: no sandbox, the commands run
// with the user's rights. It is comparable, as Options must be (equal
// Options share one analysis of a call).
type Executor struct {
	// Sandboxed says the kernel confines the commands (landlock, a
	// container): what the sandbox does not allow fails when tried.
	Sandboxed bool
	// Network says a sandboxed command can open network connections.
	// Without a sandbox the network is always reachable.
	Network bool
	// TmpDir is an absolute directory besides the work dir that a
	// sandboxed command can write and that is private to the sandbox (a
	// container's /tmp): writes there do not reach the user's files. ""
	// means none; it is ignored without a sandbox, and "/" never counts.
	TmpDir string
}

// stopsNetwork reports whether the executor stops every network
// connection.
func (e Executor) stopsNetwork() bool { return e.Sandboxed && !e.Network }

// prepared returns e with its private directory cleaned (absolute only,
// never "/"), worked out once per Options.
func (e Executor) prepared() Executor {
	out := Executor{Sandboxed: e.Sandboxed, Network: e.Network}
	if e.Sandboxed && filepath.IsAbs(e.TmpDir) {
		if d := filepath.Clean(e.TmpDir); d != "/" {
			out.TmpDir = d
		}
	}
	return out
}

// sandboxWritable reports whether p (absolute, clean) is in the directory
// private to the sandbox that runs the command.
func (a *analyzer) sandboxWritable(p string) bool {
	return a.exec.TmpDir != "" && under(p, a.exec.TmpDir)
}

// stopped reports whether the executor stops what rule id guards against,
// so that its finding is dropped: the rule is judged as the sandbox will
// judge the command. Only the rules the table marks as network rules are
// ever stopped, and only by a sandbox without network.
func (a *analyzer) stopped(id ruleID) bool {
	return id < numRules && capTable[id].network && a.exec.stopsNetwork()
}

// inline judges code given to an interpreter inline (python -c, node -e,
// perl -e, code on stdin or in a script written by the same line): the
// analyzer only scans such code for signs, which a program can build at
// run time ('so'+'cket', chr(), base64, getattr), so outside a sandbox it
// always asks. Inside one, the sandbox stops what the code may not do and
// the signs alone judge it.
func (a *analyzer) inline(name, cmd string) {
	if !a.exec.Sandboxed {
		a.ask(ruleInlineCode, name+" runs inline code, which cannot be checked, outside a sandbox", cmd)
	}
}

// netDeny refuses what uses the network under rule id and reports
// whether the caller may stop judging the command: not when the sandbox
// stops the network (the finding is dropped), since what the command does
// besides must then be judged.
func (a *analyzer) netDeny(id ruleID, reason, cmd string) bool {
	a.deny(id, reason, cmd)
	return !a.stopped(id)
}

// netTool refuses a program that talks to other machines (rule
// net-tool). Where the sandbox stops the network the finding is dropped
// (see stopped) and the program is judged like any program the analyzer
// does not know: a command line in its arguments is judged as a command.
func (a *analyzer) netTool(name string, argv []arg, sc *scope, reason, cmd string) {
	a.deny(ruleNetTool, reason, cmd)
	if a.stopped(ruleNetTool) {
		a.commandTail(name, argv, sc, cmd)
	}
}
