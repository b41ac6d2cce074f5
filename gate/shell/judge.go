package shell

import (
	"path"
	"strconv"
	"strings"

	"github.com/reinhq/rein/protect"
)

// simple judges one simple command. checked says the generic argument
// checks were already made on these words (an unwrapped inner command).
func (a *analyzer) simple(argv []arg, sc *scope, in *input, cmd string, checked bool) {
	if len(argv) == 0 || !a.tick() {
		return
	}
	if a.commands {
		a.record(argv, sc)
	}
	if !checked {
		for _, x := range argv {
			if !a.netPath(x, cmd) {
				a.readPath(x, sc, cmd)
			}
		}
	}
	n := argv[0]
	name := ""
	if n.lit {
		name = cmdName(n.val) // once: it lower-cases
	}
	if n.lit && !checked && readsTree(name, argv) {
		a.treeRead(argv[1:], sc, cmd)
	}
	if !n.lit || n.glob {
		a.deny(ruleDynamicCommand, "the command name "+n.raw+" is only known at run time", cmd)
		return
	}
	if n.val == "" {
		return
	}
	if strings.Contains(n.val, "/") {
		if text, found, known := a.scriptAt(n, sc); found {
			a.runScript(n.raw, text, known, sc, cmd, false)
		}
	}
	if sc.fn != "" && name == sc.fn && sc.async {
		a.deny(ruleForkBomb, "the function "+name+" starts copies of itself in the background or in a pipeline", cmd)
	}
	if f, ok := a.funcs[name]; ok {
		if f.movesDir {
			sc.cwd = dirs{unknown: true}
		}
		if name == "cd" || name == "pushd" || name == "popd" {
			return // a function of that name runs, not the builtin
		}
	}
	a.judge(name, argv, sc, in, cmd)
	a.operandWrites(name, argv, sc, cmd)
}

func (a *analyzer) record(argv []arg, sc *scope) {
	c := Command{Via: sc.via}
	if argv[0].lit && !argv[0].glob {
		c.Name, c.Program = path.Base(argv[0].val), argv[0].val
		if argv[0].val == "" {
			c.Name = ""
		}
	} else {
		c.Dynamic = true
	}
	if len(argv) > 1 {
		c.Args = make([]string, len(argv)-1)
		for i, x := range argv[1:] {
			if x.lit {
				c.Args[i] = x.val
				continue
			}
			c.Dynamic = true
			if c.Unknown == nil {
				c.Unknown = make([]bool, len(c.Args))
			}
			c.Unknown[i] = true
		}
	}
	a.res.Commands = append(a.res.Commands, c)
}

// judge dispatches on the command name.
func (a *analyzer) judge(name string, argv []arg, sc *scope, in *input, cmd string) {
	switch name {
	case "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp", "tftp", "aria2c",
		"http", "https", "httpie", "xh", "xhs", "lftp", "axel", "curlie", "websocat", "wscat", "nmap", "masscan", "nping",
		"hping3", "sendmail", "mail", "mailx", "mutt", "s-nail", "msmtp", "swaks", "smbclient", "ssh-copy-id", "sshpass",
		"sshfs", "rclone", "torsocks", "proxychains", "proxychains4", "grpcurl", "ngrok", "cloudflared", "mosh", "autossh",
		"ftpget", "ftpput", "tnftp", "rsh", "rcp", "rlogin", "rexec", "cadaver", "wput", "httpx", "pwncat", "cryptcat",
		"dnscat", "iodine", "chisel", "frpc", "bore", "localtunnel", "lt", "tshark", "tcpdump", "httpd", "miniserve",
		"webfsd", "thttpd", "darkhttpd", "updog", "uploadserver", "sshuttle", "stunnel", "openvpn", "wg-quick", "ssh-keyscan":
		a.netTool(name, argv, sc, name+" can send data off the machine", cmd)
	case "lynx", "links", "links2", "elinks", "w3m", "browsh", "carbonyl", "http-prompt", "wget2", "hurl", "httpstat",
		"chromium", "chromium-browser", "chrome", "google-chrome", "google-chrome-stable", "google-chrome-beta",
		"google-chrome-unstable", "firefox", "firefox-esr", "firefox-bin", "librewolf", "waterfox", "seamonkey",
		"palemoon", "brave", "brave-browser", "microsoft-edge", "microsoft-edge-stable", "msedge", "opera", "vivaldi",
		"vivaldi-stable", "epiphany", "epiphany-browser", "midori", "qutebrowser", "surf", "falkon", "konqueror",
		"dillo", "netsurf", "luakit", "headless_shell", "chrome-headless-shell", "phantomjs",
		"slimerjs", "wkhtmltopdf", "wkhtmltoimage", "xdg-open", "sensible-browser", "x-www-browser", "www-browser",
		"gnome-open", "kde-open", "kde-open5", "gvfs-open", "yt-dlp", "youtube-dl", "gallery-dl", "you-get":
		a.netTool(name, argv, sc, name+" is a web browser or downloader: it fetches addresses and can send data off the machine", cmd)
	case "hydra", "medusa", "ncrack", "patator", "crowbar", "nikto", "sqlmap", "gobuster", "dirb", "dirbuster",
		"ffuf", "wfuzz", "feroxbuster", "nuclei", "subfinder", "amass", "zmap", "zgrab", "zgrab2", "rustscan",
		"unicornscan", "arp-scan", "arpspoof", "ettercap", "bettercap", "mitmproxy", "mitmdump", "mitmweb",
		"responder", "crackmapexec", "netexec", "nxc", "evil-winrm", "enum4linux", "enum4linux-ng", "rpcclient",
		"nbtscan", "smbmap", "snmpwalk", "snmpget", "snmpset", "onesixtyone", "msfconsole", "msfrpcd", "sslscan",
		"sslyze", "testssl", "testssl.sh", "wpscan", "dnsrecon", "dnsenum", "fierce", "theharvester", "recon-ng",
		"ab", "wrk", "siege", "vegeta", "hey", "k6", "bombardier", "h2load", "nghttp", "slowhttptest",
		"ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "rdesktop", "xfreerdp", "vncviewer", "redis-cli",
		"mongo", "mongosh", "mosquitto_pub", "mosquitto_sub", "kcat", "kafkacat", "ipmitool", "iperf", "iperf3",
		"netperf", "speedtest", "speedtest-cli", "tailscale", "zerotier-cli", "tor", "torify", "proxytunnel",
		"corkscrew", "ptunnel", "ligolo", "rathole", "gost", "wstunnel", "sslocal", "ss-local", "v2ray", "xray",
		"irssi", "weechat", "fetchmail", "getmail", "transmission-cli", "transmission-remote", "rtorrent",
		"ctorrent", "qbittorrent-nox", "deluge-console", "ncftp", "ncftpget", "ncftpput", "curlftpfs",
		"pastebinit", "wgetpaste", "tcpclient", "udpclient", "sbd", "knock", "ssh-audit", "smbget", "smbtar":
		a.netTool(name, argv, sc, name+" connects to other machines and can send data off this one", cmd)
	case "rsync":
		a.rsync(argv, sc, in, cmd)
	case "openssl":
		a.openssl(argv, sc, cmd)
	case "dig", "nslookup", "host", "drill", "whois", "resolvectl", "delv", "kdig":
		for _, x := range argv[1:] {
			if !x.lit {
				a.deny(ruleNetTool, name+" sends a query built at run time off the machine, which can carry data", cmd)
				return
			}
		}
		a.ask(ruleDnsLookup, name+" sends queries off the machine, which can carry data", cmd)
	case "gh", "hub", "glab", "tea":
		a.forge(name, argv, cmd)
	case "aws", "gsutil", "gcloud", "az", "s3cmd", "azcopy", "b2", "mc", "oci", "doctl":
		a.cloud(name, argv, sc, cmd)
	case "gpg", "gpg2":
		for _, x := range argv[1:] {
			if strings.HasPrefix(x.val, "--export-secret") || x.val == "--export-ssh-key" {
				a.deny(ruleCredentialRead, "gpg exports secret keys", cmd)
				return
			}
		}
	case "sudo", "doas", "pkexec", "run0", "su", "runuser", "sudoedit", "ksu", "calife":
		a.deny(rulePrivEsc, name+" runs commands with other privileges", cmd)
		a.unwrapPriv(name, argv, sc, in)
	case "chroot", "nsenter", "unshare", "setpriv", "capsh", "systemd-run", "sg", "newgrp", "machinectl":
		a.deny(rulePrivEsc, name+" changes privileges, users or namespaces", cmd)
		a.unwrapPriv(name, argv, sc, in)
	case "setcap", "passwd", "chpasswd", "usermod", "useradd", "userdel", "adduser", "deluser", "groupadd",
		"groupmod", "gpasswd", "visudo", "chsh", "chfn", "vipw", "vigr", "pwck", "newusers":
		a.deny(rulePrivEsc, name+" changes users, passwords or capabilities", cmd)
	case "shutdown", "reboot", "halt", "poweroff", "kexec", "killall5", "telinit", "init":
		if (name == "init" || name == "telinit") && len(argv) == 1 {
			return
		}
		a.deny(ruleSystemDestroy, name+" stops or restarts the machine", cmd)
	case "systemctl", "loginctl":
		a.systemctl(argv, cmd)
	case "kill", "pkill", "killall":
		a.kill(name, argv, cmd)
	case "crontab":
		a.crontab(argv, sc, in, cmd)
	case "iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ip6tables-legacy", "nft", "ufw", "firewall-cmd", "ebtables", "arptables":
		a.deny(ruleSystemDestroy, name+" changes the firewall", cmd)
	case "mount", "umount", "swapoff", "swapon", "insmod", "rmmod", "modprobe", "kmod", "chattr", "pivot_root",
		"switch_root", "losetup", "sysrq", "setenforce", "auditctl", "aa-disable", "aa-teardown":
		a.deny(ruleSystemDestroy, name+" changes the running system", cmd)
	case "sysctl":
		a.sysctl(argv, cmd)
	case "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "cgdisk", "parted", "partprobe", "blkdiscard", "mkswap",
		"mke2fs", "mkdosfs", "mkntfs", "lvremove", "vgremove", "pvremove", "lvreduce", "cryptsetup", "hdparm", "dmsetup",
		"zpool", "zfs", "mdadm", "badblocks", "debugfs", "tune2fs", "resize2fs", "e2label", "diskutil", "format":
		a.deny(ruleDiskDestroy, name+" can destroy disks or file systems", cmd)
	case "dd":
		a.dd(argv, sc, cmd)
	case "rm", "unlink", "rmdir":
		a.rm(name, argv, sc, cmd)
	case "shred", "srm", "wipe":
		a.shred(argv, sc, cmd)
	case "cp", "mv", "install", "ln", "tee", "touch", "mkdir", "chmod", "chown", "chgrp", "truncate", "sort",
		"mkfifo", "mknod", "link", "fallocate", "split", "csplit", "patch", "ginstall", "gcp", "gmv", "sponge":
		a.writeCmd(name, argv, sc, cmd)
		if name == "patch" {
			p := a.parseOpts(argv, 1, "oiBdDFpVYzrgM", []string{"output", "input", "prefix", "directory", "ifdef", "fuzz",
				"strip", "version-control", "basename-prefix", "suffix", "reject-file", "get", "quoting-style", "merge"}, false)
			f, ok := p.value("-i", "--input")
			a.patchFiles("patch", f, ok, in, sc, cmd)
		}
	case "sed", "gsed":
		a.sed(argv, sc, cmd)
	case "tar", "gtar", "bsdtar":
		a.tar(argv, sc, cmd)
	case "unzip", "zip", "7z", "7za", "7zr", "unrar", "cpio", "ar", "gunzip", "gzip", "bunzip2", "xz", "unxz", "zstd":
		a.archive(name, argv, sc, cmd)
	case "history":
		a.history(argv, cmd)
	case "unset":
		a.unset(argv, sc, cmd)
	case "set", "shopt":
		a.set(name, argv, cmd)
	case "read", "mapfile", "readarray", "printf", "getopts", "let":
		for _, x := range argv[1:] {
			if x.val == "HOME" {
				a.homeVar = ""
			}
			if name == "read" && (x.val == "HISTFILE" || x.val == "HISTSIZE" || x.val == "HISTFILESIZE") {
				a.deny(ruleHistoryWipe, "changes where or whether shell history is kept", cmd)
			}
		}
	case "cd", "pushd", "chdir":
		a.cd(argv, sc)
	case "popd":
		sc.cwd = dirs{unknown: true}
	case "git":
		a.git(argv, sc, in, cmd)
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh", "tcsh", "lksh",
		"oksh", "pdksh", "ksh93", "busybox-sh", "hush", "elvish", "nu", "xonsh":
		a.shell(name, argv, sc, in, cmd)
	case "eval":
		a.eval(argv, sc, cmd)
	case "source", ".":
		a.source(argv, sc, in, cmd)
	case "exec", "command", "builtin", "nohup", "setsid", "env", "nice", "ionice", "timeout", "gtimeout", "stdbuf",
		"chrt", "taskset", "time", "flock", "strace", "ltrace", "unbuffer", "caffeinate", "systemd-inhibit", "cpulimit",
		"firejail", "bwrap", "fakeroot", "proot", "catchsegv", "valgrind", "dbus-launch", "dbus-run-session",
		"ssh-agent", "nocache", "faketime", "numactl", "prlimit", "coproc", "rlwrap", "tsp", "chronic", "sem":
		a.wrapper(name, argv, sc, in, cmd)
	case "xargs", "gxargs":
		a.xargs(argv, sc, cmd)
	case "find", "gfind":
		a.find(argv, sc, cmd)
	case "fd", "fdfind":
		a.fd(argv, sc, cmd)
	case "parallel":
		a.parallel(argv, sc, cmd)
	case "watch":
		a.watch(argv, sc, cmd)
	case "busybox", "toybox":
		if len(argv) > 1 && argv[1].lit && !strings.HasPrefix(argv[1].val, "-") {
			a.inner(name, argv[2:], argv[1], sc, in)
		}
	case "alias":
		a.alias(argv, sc, cmd)
	case "trap":
		a.trap(argv, sc, cmd)
	case "hash", "enable":
		if len(argv) > 1 && argv[1].lit && (strings.Contains(argv[1].val, "p") && name == "hash" || strings.Contains(argv[1].val, "f") && name == "enable") {
			a.deny(ruleDynamicCommand, name+" maps a command name to another program", cmd)
		}
	case "at", "batch":
		a.ask(rulePersistence, name+" schedules commands to run later", cmd)
		a.stdinCode(name, in, sc, true, cmd)
	case "script":
		a.script(argv, sc, cmd)
	case "tmux", "screen", "byobu":
		a.terminal(name, argv, sc, cmd)
	case "docker", "podman", "nerdctl", "lxc", "kubectl":
		a.container(name, argv, sc, cmd)
	case "awk", "gawk", "mawk", "nawk":
		a.awk(argv, sc, cmd)
	case "vi", "vim", "nvim", "ex", "view", "gvim", "gdb", "sqlite3", "mysql", "psql", "less", "more", "man", "ftp-client":
		a.shellEscapes(name, argv, sc, cmd)
	case "osascript", "expect", "pwsh", "powershell", "rscript", "r", "jshell", "deno", "bun", "php", "tclsh", "wish":
		a.interp(name, argv, sc, in, cmd)
	case "make", "gmake":
		a.make(argv, sc, in, cmd)
	case "go":
		a.goTool(argv, sc, cmd)
	case "gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "tcc":
		if o, ok := a.parseOpts(argv, 1, "oIDLlUxWBe", nil, false).value("-o"); ok {
			a.writePath(o, sc, cmd, name+" writes its output to")
		}
	default:
		a.judgeFamily(name, argv, sc, in, cmd)
	}
}

// judgeFamily handles names with version suffixes and prefixes.
func (a *analyzer) judgeFamily(name string, argv []arg, sc *scope, in *input, cmd string) {
	if strings.HasPrefix(name, "impacket-") || strings.HasPrefix(name, "msf") && len(name) > 3 {
		a.netTool(name, argv, sc, name+" connects to other machines and can send data off this one", cmd)
		return
	}
	if strings.HasPrefix(name, "mkfs") || strings.HasPrefix(name, "mkswap") || strings.HasPrefix(name, "fsck.") {
		a.deny(ruleDiskDestroy, name+" can destroy disks or file systems", cmd)
		return
	}
	fam := family(name)
	switch fam {
	case "python", "pypy", "perl", "ruby", "node", "nodejs", "lua", "luajit", "php", "irb":
		a.interp(fam, argv, sc, in, cmd)
		return
	}
	if a.pkg(fam, argv, sc, cmd) {
		return
	}
	a.commandTail(name, argv, sc, cmd)
}

// inner judges a command run by a wrapper: argv[0] is name (or the given
// name word) and the rest are its arguments.
func (a *analyzer) inner(via string, rest []arg, name arg, sc *scope, in *input) {
	start := len(a.arena.args)
	a.arena.args = append(a.arena.args, name)
	a.arena.args = append(a.arena.args, rest...)
	a.run(via, a.keepArgs(start), sc, in)
}

// run judges argv as a command run by the wrapper via.
func (a *analyzer) run(via string, argv []arg, sc *scope, in *input) {
	if len(argv) == 0 {
		return
	}
	if sc.depth+1 > MaxDepth {
		a.tooDeep("commands are nested more than " + strconv.Itoa(MaxDepth) + " levels deep")
		return
	}
	inner := *sc
	inner.depth++
	inner.via = a.appendVia(sc.via, via)
	a.simple(argv, &inner, in, joinRaw(argv), true)
	sc.cwd = inner.cwd
}

// cd follows literal directory changes.
func (a *analyzer) cd(argv []arg, sc *scope) {
	if a.cdVars {
		sc.cwd = dirs{unknown: true}
		return
	}
	i := 1
	for i < len(argv) && argv[i].lit && len(argv[i].val) > 1 && argv[i].val[0] == '-' && argv[i].val != "--" {
		i++
	}
	if i < len(argv) && argv[i].lit && argv[i].val == "--" {
		i++
	}
	if i >= len(argv) {
		if a.homeVar == "" {
			sc.cwd = dirs{list: []string{unknownHome}}
		} else {
			sc.cwd = dirs{list: []string{a.homeVar}}
		}
		return
	}
	t := argv[i]
	if !t.lit || t.glob || t.val == "-" || a.cdPath && !strings.HasPrefix(t.val, "/") && !strings.HasPrefix(t.val, "./") &&
		!strings.HasPrefix(t.val, "../") && t.val != "." && t.val != ".." {
		sc.cwd = dirs{unknown: true}
		return
	}
	ps, unknown := a.resolve(t.val, sc)
	if unknown || len(ps) == 0 {
		sc.cwd = dirs{unknown: true}
		return
	}
	sc.cwd = dirs{list: ps}
}

// hijackablePath reports the first entry of a PATH value that could hold a
// program the agent wrote: one not known before the command runs, a
// relative one (an empty entry is the current directory), or one inside
// the work dir or a temporary directory. $PATH itself keeps what the
// shell started with and is fine.
func (a *analyzer) hijackablePath(val arg) (string, bool) {
	for _, e := range strings.Split(val.raw, ":") {
		switch {
		case e == "$PATH" || e == "${PATH}" || e == `"$PATH"` || e == `"${PATH}"`:
			continue
		case e == "" || !strings.HasPrefix(e, "/"):
			return "the current directory or a relative one (" + strconv.Quote(e) + ")", true
		case strings.ContainsAny(e, "$`*?[{~\\\"'"):
			return e + " (only known at run time)", true
		}
		d := path.Clean(e)
		if a.inside(d) || a.sandboxWritable(d) || under(d, "/tmp") || under(d, "/var/tmp") || under(d, "/dev/shm") {
			return d, true
		}
	}
	return "", false
}

// envVar judges an assignment NAME=value, bare or before a command.
func (a *analyzer) envVar(name string, val arg, sc *scope, cmd string) {
	switch name {
	case "HISTFILE":
		a.deny(ruleHistoryWipe, "changes where or whether shell history is kept", cmd)
	case "HISTIGNORE":
		if !val.lit || strings.Contains(val.val, "*") {
			a.deny(ruleHistoryWipe, "keeps commands out of shell history", cmd)
		}
	case "HISTSIZE", "HISTFILESIZE", "SAVEHIST":
		if !val.lit || val.val == "" || val.val == "0" || strings.HasPrefix(val.val, "-") {
			a.deny(ruleHistoryWipe, "turns off shell history", cmd)
		}
	case "HOME":
		a.homeVar = ""
	case "CDPATH":
		a.cdPath = true
	case "PS1", "PS2", "PS3", "PS4":
		if !val.lit {
			a.deny(ruleDynamicCommand, name+" is set to a prompt only known at run time, and prompts run substitutions", cmd)
		} else if strings.ContainsAny(val.val, "$`") {
			a.nested("echo "+val.val, sc, name+"=", false, true, cmd)
		}
	case "BASH_ENV", "ENV":
		if !val.lit {
			a.deny(ruleDynamicCommand, name+" names a start-up file only known at run time", cmd)
		} else if text, found, known := a.scriptAt(val, sc); found {
			a.runScript(name+"="+val.val, text, known, sc, cmd, false)
		}
	case "GIT_CONFIG_PARAMETERS":
		a.gitConfigParams(val, sc, cmd)
	case "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR":
		if val.lit && (val.val == "/dev/null" || val.val == "") {
			return // no config at all
		}
		a.ask(ruleGitConfigCode, name+" makes git load its config, commands or hooks from "+val.raw+
			", which can make it run code", cmd)
	case "LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH":
		a.ask(ruleEnvInject, name+" loads other code into every program started", cmd)
	case "PATH":
		if dir, ok := a.hijackablePath(val); ok {
			a.ask(ruleEnvInject, "PATH="+val.raw+" makes a command name run a program from "+dir+
				", where the agent could have put it", cmd)
		}
	case "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PROXY_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR",
		"GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "PAGER", "EDITOR", "VISUAL", "MANPAGER",
		"PROMPT_COMMAND", "BROWSER", "RSYNC_RSH", "CVS_RSH", "LESSOPEN", "LESSCLOSE", "GIT_TRACE2_EVENT_TARGET":
		a.codeValue(name+"=", val, sc, cmd)
	default:
		if strings.HasPrefix(name, "BASH_FUNC_") {
			if !val.lit {
				a.deny(ruleDynamicCommand, "an exported function is only known at run time", cmd)
				return
			}
			a.nested("f"+val.val, sc, "exported function", false, false, cmd)
			return
		}
		if strings.HasPrefix(name, "GIT_CONFIG_KEY_") {
			if !val.lit || protect.ExecutableGitKey(val.val, "") {
				a.ask(ruleGitConfigCode, name+" sets the git config key "+val.raw+
					" for every git command started, and git runs its value as a command", cmd)
			}
			return
		}
		if strings.HasPrefix(name, "GIT_CONFIG_VALUE_") || strings.HasSuffix(name, "_COMMAND") {
			if val.lit {
				a.nested(strings.TrimPrefix(strings.TrimSpace(val.val), "!"), sc, name+"=", false, true, cmd)
			} else {
				a.codeValue(name+"=", val, sc, cmd)
			}
		}
	}
}

// codeValue judges a value that some program will run as a shell command.
func (a *analyzer) codeValue(via string, val arg, sc *scope, cmd string) {
	if !val.lit {
		a.deny(ruleDynamicCommand, via+" is set to a command only known at run time", cmd)
		return
	}
	v := strings.TrimPrefix(strings.TrimSpace(val.val), "!")
	if v == "" {
		return
	}
	a.nested(v, sc, via, false, false, cmd)
}

func (a *analyzer) history(argv []arg, cmd string) {
	for _, x := range argv[1:] {
		if !x.lit {
			continue
		}
		if strings.HasPrefix(x.val, "-") && strings.ContainsAny(x.val, "cd") {
			a.deny(ruleHistoryWipe, "clears or rewrites the shell history", cmd)
			return
		}
	}
}

func (a *analyzer) unset(argv []arg, sc *scope, cmd string) {
	for _, x := range argv[1:] {
		switch x.val {
		case "HISTFILE", "HISTSIZE", "HISTFILESIZE", "HISTCONTROL":
			a.deny(ruleHistoryWipe, "turns off shell history", cmd)
		case "HOME":
			a.homeVar = ""
		}
		if !x.lit {
			a.homeVar = ""
		}
	}
}

func (a *analyzer) set(name string, argv []arg, cmd string) {
	for i, x := range argv[1:] {
		if name == "shopt" && (x.val == "cdable_vars" || !x.lit) {
			a.cdVars = true
		}
		if x.val == "history" && i > 0 {
			prev := argv[i].val
			if name == "set" && prev == "+o" || name == "shopt" && strings.Contains(prev, "u") {
				a.deny(ruleHistoryWipe, "turns off shell history", cmd)
			}
		}
	}
}

func (a *analyzer) systemctl(argv []arg, cmd string) {
	for _, x := range argv[1:] {
		switch x.val {
		case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "rescue", "emergency",
			"isolate", "default", "soft-reboot", "terminate-session", "kill-session", "kill-user", "terminate-user":
			a.deny(ruleSystemDestroy, "stops, restarts or isolates the machine", cmd)
			return
		case "mask", "disable", "stop", "kill", "restart", "try-restart", "reload-or-restart", "daemon-reexec":
			a.deny(ruleSystemDestroy, "stops, restarts or disables a system service", cmd)
			return
		}
	}
}

func (a *analyzer) kill(name string, argv []arg, cmd string) {
	dash := false
	for i, x := range argv[1:] {
		if !x.lit {
			continue
		}
		if x.val == "--" {
			dash = true
			continue
		}
		if x.val == "-1" && (dash || i > 0) || name == "kill" && x.val == "1" {
			a.deny(ruleSystemDestroy, "signals every process (or init)", cmd)
			return
		}
		if name == "killall" && x.val == "-u" && i+2 < len(argv) && argv[i+2].val == "root" {
			a.deny(ruleSystemDestroy, "kills every process of root", cmd)
			return
		}
	}
}

func (a *analyzer) crontab(argv []arg, sc *scope, in *input, cmd string) {
	p := a.parseOpts(argv, 1, "u", nil, false)
	switch {
	case p.has("-r"):
		a.deny(ruleSystemDestroy, "removes the user's crontab", cmd)
	case p.has("-l"):
	default:
		a.deny(ruleWriteOutside, "crontab installs commands to run later, outside the work dir", cmd)
		if text, lit, known := a.inputText(in); known && lit && (len(p.ops) == 0 || p.ops[0].val == "-") {
			a.nested(cronCommands(text), sc, "crontab", false, true, cmd)
		}
	}
}

func (a *analyzer) sysctl(argv []arg, cmd string) {
	for _, x := range argv[1:] {
		if x.lit && (x.val == "-w" || x.val == "--write" || x.val == "-p" || x.val == "--load" || x.val == "--system" ||
			strings.HasPrefix(x.val, "-") && strings.ContainsAny(x.val, "wp") && !strings.HasPrefix(x.val, "--")) ||
			!strings.HasPrefix(x.val, "-") && strings.Contains(x.val, "=") {
			a.deny(ruleSystemDestroy, "changes kernel settings", cmd)
			return
		}
	}
}

func (a *analyzer) rsync(argv []arg, sc *scope, in *input, cmd string) {
	p := a.parseOpts(argv, 1, "eBfTM", []string{"rsh", "rsync-path", "filter", "exclude", "include", "exclude-from",
		"include-from", "files-from", "temp-dir", "compare-dest", "copy-dest", "link-dest", "backup-dir", "suffix",
		"log-file", "password-file", "port", "sockopts", "out-format", "chmod", "chown", "usermap", "groupmap",
		"partial-dir", "timeout", "contimeout", "bwlimit", "max-size", "min-size", "max-delete", "block-size",
		"checksum-choice", "compress-choice", "info", "debug", "remote-option", "modify-window", "iconv", "only-write-batch", "write-batch", "read-batch"}, false)
	for _, o := range p.ops {
		if remoteSpec(o.val) {
			if a.netDeny(ruleNetTool, "rsync to or from a remote host", cmd) {
				return
			}
			break
		}
	}
	if sh, ok := p.value("-e", "--rsh"); ok {
		a.codeValue("rsync -e", sh, sc, cmd)
	}
	if len(p.ops) >= 2 {
		a.writePath(p.ops[len(p.ops)-1], sc, cmd, "rsync copies into")
		if p.has("--remove-source-files", "--remove-sent-files") {
			for _, o := range p.ops[:len(p.ops)-1] {
				a.remove(o, true, sc, cmd, "rsync --remove-source-files")
			}
		}
	}
	if p.has("--delete", "--del", "--delete-before", "--delete-after", "--delete-during", "--delete-delay",
		"--delete-excluded", "--delete-missing-args") && len(p.ops) >= 2 {
		a.ask(ruleRecursiveDelete, "rsync --delete removes files from the destination", cmd)
	}
}

// remoteSpec reports an rsync or scp operand naming a remote host:
// host:path, user@host:path, rsync://...
func remoteSpec(v string) bool {
	if strings.Contains(v, "://") {
		return true
	}
	colon := strings.IndexByte(v, ':')
	if colon <= 0 {
		return false
	}
	slash := strings.IndexByte(v, '/')
	return slash < 0 || colon < slash
}

func (a *analyzer) openssl(argv []arg, sc *scope, cmd string) {
	for _, x := range argv[1:] {
		switch x.val {
		case "s_client", "s_server", "s_time", "-connect", "ocsp":
			if a.netDeny(ruleNetTool, "openssl "+x.val+" opens a network connection", cmd) {
				return
			}
		}
	}
	for i, x := range argv {
		if x.val == "-out" && i+1 < len(argv) {
			a.writePath(argv[i+1], sc, cmd, "openssl writes")
		}
	}
}

// readsTree reports commands that read whole directory trees.
func readsTree(name string, argv []arg) bool {
	flag := func(letters string, long ...string) bool {
		for _, x := range argv[1:] {
			if !x.lit || !strings.HasPrefix(x.val, "-") {
				continue
			}
			if strings.HasPrefix(x.val, "--") {
				if contains(long, x.val) {
					return true
				}
				continue
			}
			if strings.ContainsAny(x.val[1:], letters) {
				return true
			}
		}
		return false
	}
	switch name {
	case "rg", "ag", "ack", "ugrep", "tar", "bsdtar", "gtar", "zip", "7z", "7za", "rclone", "scp", "rsync":
		return true
	case "grep", "egrep", "fgrep", "zgrep", "ggrep":
		return flag("rR", "--recursive", "--dereference-recursive")
	case "cp", "gcp":
		return flag("rRa", "--recursive", "--archive")
	case "find", "gfind":
		return hasOpt(argv, "-exec") || hasOpt(argv, "-execdir") || hasOpt(argv, "-ok")
	}
	return false
}

// treeRead refuses reading a tree that holds credential stores: the home
// directory, ~/.config, ~/.docker, "/".
func (a *analyzer) treeRead(args []arg, sc *scope, cmd string) {
	home := a.home
	if home == "" {
		home = unknownHome
	}
	for _, x := range args {
		if !x.lit || x.val == "" || x.val[0] == '-' && x.val != "-" {
			continue
		}
		if relativeDown(x.val) && a.cwdInside(sc) {
			continue // every path it names is inside the work dir
		}
		ps, _ := a.resolve(x.val, sc)
		for _, p := range ps {
			if a.inside(p) {
				continue
			}
			for _, c := range credentials() {
				if cp := home + "/" + strings.Join(c, "/"); under(cp, p) && cp != p {
					a.deny(ruleCredentialRead, "reads "+a.show(p)+", which holds credential stores", cmd)
					return
				}
			}
		}
	}
}
