package shell

import (
	"path"
	"strings"
	"sync"

	"github.com/reinhq/rein/protect"
	"github.com/reinhq/rein/secret"
)

// unknownHome stands for a home directory that is not known (~ when
// Options.Home is empty, ~user): a path outside any work dir but "/".
const unknownHome = "/~"

// resolve returns the absolute paths p may name, given the directories the
// command may run in; unknown is true when a relative path meets an unknown
// directory.
// The paths live in the analyzer's arena.
func (a *analyzer) resolve(p string, sc *scope) (out []string, unknown bool) {
	start := len(a.arena.paths)
	switch {
	case p == "":
		return nil, false
	case p[0] == '~':
		rest := ""
		if i := strings.IndexByte(p, '/'); i >= 0 {
			rest = p[i:]
		}
		a.arena.paths = append(a.arena.paths, path.Clean(unknownHome+rest))
	case p[0] == '/':
		a.arena.paths = append(a.arena.paths, path.Clean(p))
	case sc.cwd.unknown:
		return nil, true
	default:
		for _, d := range sc.cwd.list {
			a.arena.paths = append(a.arena.paths, path.Join(d, p))
		}
	}
	return a.keepPaths(start), false
}

// relativeDown reports a relative path with no ".." component: joined to
// a clean directory, it names that directory or a path inside it.
func relativeDown(p string) bool {
	if p == "" || p[0] == '/' || p[0] == '~' {
		return false
	}
	for rest := p; rest != ""; {
		comp, next, _ := strings.Cut(rest, "/")
		if comp == ".." {
			return false
		}
		rest = next
	}
	return true
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/'
}

func (a *analyzer) inside(p string) bool { return a.work != "" && under(p, a.work) }

// cwdInside reports that every directory the command may run in is inside
// the work dir.
func (a *analyzer) cwdInside(sc *scope) bool {
	if sc.cwd.unknown {
		return false
	}
	for _, d := range sc.cwd.list {
		if !a.inside(d) {
			return false
		}
	}
	return true
}

// writableDevice reports device files that are harmless to write.
func writableDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/stdin",
		"/dev/tty", "/dev/random", "/dev/urandom":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/") || strings.HasPrefix(p, "/dev/pts/")
}

// isDisk reports block devices and raw memory.
func isDisk(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	n := p[len("/dev/"):]
	for _, pre := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "mapper/", "dm-", "md", "loop", "sr", "nbd", "rdisk", "zram"} {
		if strings.HasPrefix(n, pre) {
			return true
		}
	}
	switch n {
	case "mem", "kmem", "port", "root":
		return true
	}
	return false
}

// historyFiles are shell and tool history files.
var historyFiles = []string{".bash_history", ".zsh_history", ".sh_history", ".history", ".zhistory",
	".python_history", ".node_repl_history", ".mysql_history", ".psql_history", ".lesshst", ".sqlite_history",
	".rediscli_history", "fish_history"}

func isHistory(p string) bool {
	b := path.Base(p)
	for _, h := range historyFiles {
		if b == h {
			return true
		}
	}
	return false
}

// credentials are the paths, relative to a home directory, that hold
// secrets (secret.CredentialPlaces, rein's one list), split into their
// components.
var credentials = sync.OnceValue(func() [][]string {
	var out [][]string
	for _, p := range secret.CredentialPlaces() {
		out = append(out, strings.Split(p, "/"))
	}
	return out
})

// credHints are substrings one of which a credential path must contain;
// they let most arguments skip the full check.
var credHints = []string{".ssh", ".aws", ".gnupg", ".kube", ".netrc", "credentials", ".azure", ".npmrc", ".pypirc",
	".pgpass", ".vault-token", ".password-store", ".docker", "gcloud", ".config", "shadow", "sudoers", "environ",
	"ssh_host_", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", ".boto", ".s3cfg", "settings.xml", "master.passwd",
	"keyrings", ".mozilla", "chrome", "chromium", "Keychains", ".pulumi", ".oci", ".ngrok2", "rclone",
	".terraform.d", ".gem", ".m2"}

// credHint reports whether s contains one of credHints. It runs on most
// arguments with a dot or a slash, so rather than searching s once per hint
// it walks s once, trying only the hints that start with the byte at hand.
func credHint(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		for _, h := range credHintsBy()[pairKey(s[i], s[i+1])] {
			if strings.HasPrefix(s[i:], h) {
				return true
			}
		}
	}
	return false
}

// credHintsBy is credHints by a hash of their first two bytes (every hint
// has at least two), so most positions of a word have no hint to try.
var credHintsBy = sync.OnceValue(func() *[1024][]string {
	var t [1024][]string
	for _, h := range credHints {
		k := pairKey(h[0], h[1])
		t[k] = append(t[k], h)
	}
	return &t
})

func pairKey(b0, b1 byte) int { return (int(b0)<<5 ^ int(b1)) & 1023 }

// credential returns a description when the absolute path p (which may
// hold glob patterns) names a credential store, else "".
func (a *analyzer) credential(p string, glob bool) string {
	switch {
	case matchPath(p, "/etc/shadow", glob), matchPath(p, "/etc/gshadow", glob), matchPath(p, "/etc/master.passwd", glob),
		matchPath(p, "/etc/sudoers", glob), strings.HasPrefix(p, "/etc/sudoers.d"):
		return p
	case strings.HasPrefix(p, "/etc/ssh/ssh_host_") && !strings.HasSuffix(p, ".pub"):
		return p
	case strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/environ"):
		return p
	}
	// The components of q, and where each ends in q, on the stack: the
	// root and parent below are prefixes of q ("/" + the first k components
	// joined by "/"), so slicing q gives them without building strings.
	q := p
	if !strings.HasPrefix(q, "/") {
		q = "/" + q
	}
	var compBuf [32]string
	var endBuf [32]int
	comps, ends := splitComps(compBuf[:0], endBuf[:0], q)
	for i := range comps {
		for _, c := range credentials() {
			if !glob && comps[i] != c[0] {
				continue // what matchComps would say, without the call
			}
			if i+len(c) > len(comps) || !matchComps(comps[i:i+len(c)], c, glob) {
				continue
			}
			root := q[:ends[i+len(c)-1]]
			parent := "/"
			if i > 0 {
				parent = q[:ends[i-1]]
			}
			if a.inside(root) && parent != a.home {
				continue // a file of the project that happens to be named so
			}
			return root
		}
	}
	return ""
}

// splitComps appends the "/"-separated components of q[1:] to comps, as
// strings.Split does, and where each ends in q to ends.
func splitComps(comps []string, ends []int, q string) ([]string, []int) {
	start := 1
	for i := 1; i <= len(q); i++ {
		if i == len(q) || q[i] == '/' {
			comps = append(comps, q[start:i])
			ends = append(ends, i)
			start = i + 1
		}
	}
	return comps, ends
}

func matchPath(p, want string, glob bool) bool {
	if p == want {
		return true
	}
	if !glob {
		return false
	}
	return matchComps(strings.Split(strings.TrimPrefix(p, "/"), "/"), strings.Split(strings.TrimPrefix(want, "/"), "/"), true)
}

func matchComps(got, want []string, glob bool) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		if !glob || !hasGlob(got[i]) {
			return false
		}
		if want[i][0] == '.' && got[i][0] != '.' {
			return false // a leading dot must be matched literally
		}
		if ok, err := path.Match(got[i], want[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// protected reports places no command may write to, even inside the work
// dir: system configuration, boot files, kernel settings, credentials and
// shell start-up files.
func (a *analyzer) protected(p string) bool {
	for _, d := range []string{"/etc", "/boot", "/proc/sys", "/sys", "/var/spool/cron"} {
		if under(p, d) {
			return true
		}
	}
	if a.credential(p, false) != "" {
		return true
	}
	home := a.home
	if home == "" {
		home = unknownHome
	}
	// under(p, home+"/"+f), without building home+"/"+f for every f
	if !strings.HasPrefix(p, home) || len(p) <= len(home) || p[len(home)] != '/' {
		return false
	}
	rest := p[len(home)+1:]
	for _, f := range []string{".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
		".zshenv", ".zprofile", ".zlogin", ".config/autostart", ".config/systemd", ".local/bin", ".ssh"} {
		if under(rest, f) {
			return true
		}
	}
	return false
}

// readPath refuses an argument or input redirect that names a credential
// store.
func (a *analyzer) readPath(t arg, sc *scope, cmd string) {
	if !t.glob && !hasByteIn(t.val, &pathish) && a.cwdInside(sc) {
		return // a plain word run inside the work dir names no credential
	}
	if !t.glob && !credHint(t.val) {
		return
	}
	cands := []string{t.val}
	if i := strings.IndexByte(t.val, '='); i >= 0 {
		cands = append(cands, t.val[i+1:])
	}
	for _, v := range cands {
		if !t.lit {
			if s := credText(v); s != "" {
				a.deny(ruleCredentialRead, "names a credential store ("+s+")", cmd)
				return
			}
			continue
		}
		ps, _ := a.resolve(v, sc)
		for _, p := range ps {
			if c := a.credential(p, t.glob); c != "" {
				a.deny(ruleCredentialRead, "names the credential store "+a.show(c), cmd)
				return
			}
		}
	}
}

// show renders a path for a message, with the home directory as ~.
func (a *analyzer) show(p string) string {
	if a.home != "" && under(p, a.home) {
		return "~" + strings.TrimPrefix(p, a.home)
	}
	if under(p, unknownHome) {
		return "~" + strings.TrimPrefix(p, unknownHome)
	}
	return p
}

// credTexts are credential paths as they appear inside code or text.
var credTexts = []string{"/.ssh", ".ssh/", "/.aws", ".aws/", "/.gnupg", ".gnupg/", "/.kube/", ".kube/config", "/.netrc",
	".git-credentials", ".docker/config.json", ".config/gcloud", "/etc/shadow", "/etc/gshadow", "/etc/sudoers",
	"/.azure", "/.npmrc", "/.pypirc", "/.pgpass", ".vault-token", ".password-store", "id_rsa", "id_ed25519",
	"id_ecdsa", "/environ", ".config/gh/hosts"}

// credText returns the credential path text s mentions, or "".
func credText(s string) string {
	for _, c := range credTexts {
		if strings.Contains(s, c) {
			return strings.Trim(c, "/")
		}
	}
	return ""
}

// netPath refuses bash's network pseudo-files in any argument or redirect.
func (a *analyzer) netPath(t arg, cmd string) bool {
	if !strings.Contains(t.val, "/dev/") {
		return false
	}
	if strings.Contains(t.val, "/dev/tcp/") || strings.Contains(t.val, "/dev/udp/") ||
		(!t.lit && strings.Contains(t.val, "/dev/"+dynMark)) {
		a.deny(ruleDevTcp, "opens a network connection through /dev/tcp or /dev/udp", cmd)
		return true
	}
	return false
}

// writePath judges a write to target t.
func (a *analyzer) writePath(t arg, sc *scope, cmd, verb string) {
	a.writePathAs(t, sc, cmd, verb, true)
}

// writePathAs is writePath; protected says whether a write to a
// protected path asks (not for git's writes into its own repository).
func (a *analyzer) writePathAs(t arg, sc *scope, cmd, verb string, protected bool) {
	if !t.lit {
		if s := credText(t.val); s != "" {
			a.deny(ruleWriteOutside, verb+" a credential store ("+s+")", cmd)
			return
		}
		if strings.HasPrefix(t.val, "/etc/") || strings.HasPrefix(t.val, "/dev/sd") || strings.HasPrefix(t.val, "/boot/") {
			a.deny(ruleWriteOutside, verb+" a system location ("+t.raw+")", cmd)
			return
		}
		a.ask(ruleWriteUnknown, verb+" a path only known at run time ("+t.raw+")", cmd)
		// .git/hooks/$NAME: the known directory part may be protected
		if pre, _, _ := strings.Cut(t.val, dynMark); protected && strings.Contains(pre, "/") {
			ps, _ := a.resolve(pre[:strings.LastIndexByte(pre, '/')], sc)
			for _, p := range ps {
				if a.protectWrite(p, false, cmd, verb) {
					break
				}
			}
		}
		return
	}
	ps, unknown := a.resolve(t.val, sc)
	if t.many && protected {
		// every file found below t.val (find -exec's {}): the root's own
		// name says nothing of what lies below it
		a.manyWrite(strings.TrimSuffix(verb, " writes to"), t, cmd)
	}
	for _, p := range ps {
		if !a.judgeWrite(p, cmd, verb) && protected {
			a.protectWrite(p, t.glob, cmd, verb)
		}
	}
	if unknown {
		a.ask(ruleWriteUnknown, verb+" "+t.raw+" after a change to a directory only known at run time", cmd)
	}
}

// judgeWrite judges a write to the absolute path p; it reports whether the
// write was refused.
func (a *analyzer) judgeWrite(p, cmd, verb string) bool {
	switch {
	case writableDevice(p):
		return false
	case isHistory(p):
		a.deny(ruleHistoryWipe, verb+" the history file "+a.show(p), cmd)
	case isDisk(p):
		a.deny(ruleDiskDestroy, verb+" the device "+p, cmd)
	case a.protected(p):
		a.deny(ruleWriteOutside, verb+" the protected location "+a.show(p), cmd)
	case !a.inside(p) && !a.sandboxWritable(p):
		a.deny(ruleWriteOutside, verb+" "+a.show(p)+", outside the work dir", cmd)
	default:
		return false
	}
	return true
}

// protectWrite asks about a write to p, inside the work dir, when p is a
// protected path (protect.List): a git hook or config, a shell rc file, an
// editor's or agent's settings. glob says p may hold glob patterns, which
// ask when they could match a protected name. It reports whether it asked.
func (a *analyzer) protectWrite(p string, glob bool, cmd, verb string) bool {
	r, ok := a.protectedRule(p, glob)
	if !ok {
		return false
	}
	a.ask(ruleProtectedPath, verb+" "+a.show(p)+", a protected path: "+r.Why, cmd)
	return true
}

// protectedRule returns the protect rule p falls under, p being an
// absolute path inside the work dir.
func (a *analyzer) protectedRule(p string, glob bool) (protect.Rule, bool) {
	if !a.inside(p) || len(p) <= len(a.work)+1 {
		return protect.Rule{}, false
	}
	rel := p[len(a.work)+1:]
	if !glob && !a.heads.may(rel) {
		return protect.Rule{}, false
	}
	if r, ok := a.protect.Match(rel); ok {
		return r, true
	}
	if !glob || !hasGlob(rel) {
		return protect.Rule{}, false
	}
	// A glob: try each protected name in place of each pattern element
	// that matches it (".[g]it/config", ".*rc", ".vs*/tasks.json").
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		if !hasGlob(c) {
			continue
		}
		for _, r := range a.protect.Rules() {
			for _, name := range strings.Split(strings.TrimSuffix(r.Pattern, "/"), "/") {
				if c[0] != '.' && name[0] == '.' {
					continue // a leading dot is only matched literally
				}
				if ok, err := path.Match(c, name); err != nil || !ok {
					continue
				}
				cand := strings.Join(append(append(append([]string(nil), comps[:i]...), name), comps[i+1:]...), "/")
				if r, ok := a.protect.Match(cand); ok {
					return r, true
				}
			}
		}
	}
	return protect.Rule{}, false
}

// protectHeads is the first element of every protected pattern: a path
// none of whose elements is one cannot be protected, which most paths show
// without a call of protect.Match.
type protectHeads struct {
	lit   map[string]bool // lower-case literal first elements
	globs []globHead      // lower-case first elements with glob characters
	any   bool            // an empty first element: every path may match
}

// globHead is a first element with glob characters, and the longest run
// of it without any, which every element it matches contains (so that
// most elements are ruled out without path.Match).
type globHead struct{ pat, need string }

func newProtectHeads(l *protect.List) protectHeads {
	h := protectHeads{lit: map[string]bool{}}
	for _, r := range l.Rules() {
		e, _, _ := strings.Cut(strings.TrimPrefix(strings.ToLower(strings.ReplaceAll(r.Pattern, "\\", "/")), "/"), "/")
		switch {
		case e == "":
			h.any = true
		case hasGlob(e):
			h.globs = append(h.globs, globHead{pat: e, need: globNeed(e)})
		default:
			h.lit[e] = true
		}
	}
	return h
}

// globNeed returns the longest run of pattern g outside its glob
// characters and bracket classes; "" when g is malformed.
func globNeed(g string) string {
	best, start := "", 0
	take := func(end int) {
		if end-start > len(best) {
			best = g[start:end]
		}
	}
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '*', '?':
			take(i)
			start = i + 1
		case '[':
			take(i)
			j := strings.IndexByte(g[i:], ']')
			if j < 0 {
				return ""
			}
			i += j
			start = i + 1
		}
	}
	take(len(g))
	return best
}

// may reports whether rel could match a protected pattern: whether any
// of its elements, folded as protect.Match folds an ASCII name (lower case,
// trailing dots and spaces dropped), is a pattern's first element. Every
// element Match compares after cleaning is one of rel's, so a miss here is
// a miss there; a name that is not plain ASCII always goes to Match.
func (h *protectHeads) may(rel string) bool {
	if h.any || strings.IndexByte(rel, '\\') >= 0 || !isASCII(rel) {
		return true
	}
	for rest := rel; rest != ""; {
		e, next, _ := strings.Cut(rest, "/")
		rest = next
		if e = strings.TrimRight(e, ". "); e == "" {
			continue
		}
		if hasUpper(e) {
			e = strings.ToLower(e)
		}
		if h.lit[e] {
			return true
		}
		for _, g := range h.globs {
			if g.need != "" && !strings.Contains(e, g.need) {
				continue
			}
			if ok, err := path.Match(g.pat, e); err != nil || ok {
				return true
			}
		}
	}
	return false
}

// hasUpper reports whether s holds an ASCII upper-case letter.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
