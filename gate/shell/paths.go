package shell

import (
	"path"
	"strings"
)

// unknownHome stands for a home directory that is not known (~ when
// Options.Home is empty, ~user): a path outside any work dir but "/".
const unknownHome = "/~"

// resolve returns the absolute paths p may name, given the directories the
// command may run in; unknown is true when a relative path meets an unknown
// directory.
func (a *analyzer) resolve(p string, sc *scope) (out []string, unknown bool) {
	switch {
	case p == "":
		return nil, false
	case p[0] == '~':
		rest := ""
		if i := strings.IndexByte(p, '/'); i >= 0 {
			rest = p[i:]
		}
		return []string{path.Clean(unknownHome + rest)}, false
	case p[0] == '/':
		return []string{path.Clean(p)}, false
	case sc.cwd.unknown:
		return nil, true
	}
	out = make([]string, 0, len(sc.cwd.list))
	for _, d := range sc.cwd.list {
		out = append(out, path.Join(d, p))
	}
	return out, false
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

// credentials are paths, relative to a home directory, that hold secrets.
var credentials = [][]string{
	{".ssh"}, {".aws"}, {".gnupg"}, {".kube"}, {".netrc"}, {".git-credentials"}, {".azure"},
	{".npmrc"}, {".pypirc"}, {".pgpass"}, {".vault-token"}, {".password-store"}, {".docker", "config.json"},
	{".config", "gcloud"}, {".config", "gh"}, {".terraform.d", "credentials.tfrc.json"}, {".gem", "credentials"},
	{".cargo", "credentials"}, {".cargo", "credentials.toml"}, {".m2", "settings.xml"}, {".boto"}, {".s3cfg"},
	{".local", "share", "keyrings"}, {".mozilla"}, {".config", "google-chrome"}, {".config", "chromium"},
	{"Library", "Keychains"}, {".config", "op"}, {".config", "rclone"}, {".pulumi"}, {".oci"}, {".ngrok2"},
}

// credHints are substrings one of which a credential path must contain;
// they let most arguments skip the full check.
var credHints = []string{".ssh", ".aws", ".gnupg", ".kube", ".netrc", "credentials", ".azure", ".npmrc", ".pypirc",
	".pgpass", ".vault-token", ".password-store", ".docker", "gcloud", ".config", "shadow", "sudoers", "environ",
	"ssh_host_", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", ".boto", ".s3cfg", "settings.xml", "master.passwd",
	"keyrings", ".mozilla", "chrome", "chromium", "Keychains", ".pulumi", ".oci", ".ngrok2", "rclone"}

func credHint(s string) bool {
	for _, h := range credHints {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}

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
	comps := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i := range comps {
		for _, c := range credentials {
			if i+len(c) > len(comps) || !matchComps(comps[i:i+len(c)], c, glob) {
				continue
			}
			root := "/" + strings.Join(comps[:i+len(c)], "/")
			parent := "/" + strings.Join(comps[:i], "/")
			if a.inside(root) && parent != a.home {
				continue // a file of the project that happens to be named so
			}
			return root
		}
	}
	return ""
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
	for _, f := range []string{".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
		".zshenv", ".zprofile", ".zlogin", ".config/autostart", ".config/systemd", ".local/bin", ".ssh"} {
		if under(p, home+"/"+f) {
			return true
		}
	}
	return false
}

// readPath refuses an argument or input redirect that names a credential
// store.
func (a *analyzer) readPath(t arg, sc *scope, cmd string) {
	if !t.glob && !strings.ContainsAny(t.val, "./~") && a.cwdInside(sc) {
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
				a.deny("credential-read", "names a credential store ("+s+")", cmd)
				return
			}
			continue
		}
		ps, _ := a.resolve(v, sc)
		for _, p := range ps {
			if c := a.credential(p, t.glob); c != "" {
				a.deny("credential-read", "names the credential store "+a.show(c), cmd)
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
		a.deny("dev-tcp", "opens a network connection through /dev/tcp or /dev/udp", cmd)
		return true
	}
	return false
}

// writePath judges a write to target t.
func (a *analyzer) writePath(t arg, sc *scope, cmd, verb string) {
	if !t.lit {
		if s := credText(t.val); s != "" {
			a.deny("write-outside", verb+" a credential store ("+s+")", cmd)
			return
		}
		if strings.HasPrefix(t.val, "/etc/") || strings.HasPrefix(t.val, "/dev/sd") || strings.HasPrefix(t.val, "/boot/") {
			a.deny("write-outside", verb+" a system location ("+t.raw+")", cmd)
			return
		}
		a.ask("write-unknown", verb+" a path only known at run time ("+t.raw+")", cmd)
		return
	}
	ps, unknown := a.resolve(t.val, sc)
	for _, p := range ps {
		a.judgeWrite(p, cmd, verb)
	}
	if unknown {
		a.ask("write-unknown", verb+" "+t.raw+" after a change to a directory only known at run time", cmd)
	}
}

// judgeWrite judges a write to the absolute path p; it reports whether the
// write was refused.
func (a *analyzer) judgeWrite(p, cmd, verb string) bool {
	switch {
	case writableDevice(p):
		return false
	case isHistory(p):
		a.deny("history-wipe", verb+" the history file "+a.show(p), cmd)
	case isDisk(p):
		a.deny("disk-destroy", verb+" the device "+p, cmd)
	case a.protected(p):
		a.deny("write-outside", verb+" the protected location "+a.show(p), cmd)
	case !a.inside(p):
		a.deny("write-outside", verb+" "+a.show(p)+", outside the work dir", cmd)
	default:
		return false
	}
	return true
}
