package shell

import (
	"slices"
	"strings"
)

// An unknown program whose arguments hold a command line (rtk git reset
// --hard, mytool rm -rf /, ansible all -a "rm -rf x") may well run it: the
// tail from the first argument that names a program the analyzer judges is
// judged as a command too, and an argument that is itself a command line
// starting with one is parsed as one. Programs whose arguments are data
// (echo, grep, ...) are not scanned.

// tailHeads are the program names that start such a tail: every name the
// analyzer judges (TestTailHeadsCoverJudge keeps the two in step) except
// those in tailHeadsExcluded, sorted.
var tailHeads = []string{
	"7z", "7za", "7zr", "aa-disable", "aa-teardown", "adduser", "amass", "apk", "apt", "apt-fast", "apt-get",
	"aptitude", "ar", "aria2c", "arp-scan", "arpspoof", "arptables", "asdf", "ash", "auditctl", "aura",
	"autossh", "awk", "aws", "axel", "az", "azcopy", "b2", "badblocks", "bash", "bettercap", "blkdiscard",
	"bombardier", "bore", "brave", "brave-browser", "brew", "browsh", "bsdtar", "bun", "bunx", "bunzip2",
	"busybox", "busybox-sh", "bwrap", "byobu", "c++", "cabal", "cadaver", "caffeinate", "calife", "capsh",
	"carbonyl", "cargo", "catchsegv", "cc", "cfdisk", "cgdisk", "chattr", "chfn", "chgrp", "chisel", "chmod",
	"choco", "chown", "chpasswd", "chrome", "chrome-headless-shell", "chromium", "chromium-browser", "chronic",
	"chroot", "chrt", "chsh", "clang", "clang++", "cloudflared", "cnpm", "command", "composer", "conan",
	"conda", "coproc", "corepack", "corkscrew", "cp", "cpan", "cpanm", "cpanp", "cpio", "cpulimit",
	"crackmapexec", "crontab", "crowbar", "cryptcat", "cryptsetup", "csh", "csplit", "ctorrent", "curl",
	"curlftpfs", "curlie", "darkhttpd", "dash", "dbus-launch", "dbus-run-session", "dd", "debugfs",
	"deluge-console", "deluser", "delv", "deno", "dig", "dillo", "dirb", "dirbuster", "diskutil", "dmsetup",
	"dnf", "dnscat", "dnsenum", "dnsrecon", "doas", "docker", "doctl", "dotnet", "dpkg", "drill", "e2label",
	"easy_install", "ebtables", "elan", "elinks", "elvish", "emerge", "enum4linux", "enum4linux-ng", "env",
	"eopkg", "epiphany", "epiphany-browser", "ettercap", "eval", "evil-winrm", "ex", "exec", "expect",
	"fakeroot", "faketime", "falkon", "fallocate", "fd", "fdfind", "fdisk", "feroxbuster", "fetchmail", "ffuf",
	"fierce", "find", "firefox", "firefox-bin", "firefox-esr", "firejail", "firewall-cmd", "fish", "flatpak",
	"flit", "flock", "fnm", "frpc", "ftp", "ftp-client", "ftpget", "ftpput", "g++", "gallery-dl", "gawk", "gcc",
	"gcloud", "gcp", "gdb", "gdisk", "gem", "getmail", "gfind", "gh", "ghcup", "ginstall", "git", "glab",
	"gmake", "gmv", "gnome-open", "go", "gobuster", "google-chrome", "google-chrome-beta",
	"google-chrome-stable", "google-chrome-unstable", "gost", "gpasswd", "gpg", "gpg2", "groupadd", "groupmod",
	"grpcurl", "gsed", "gsutil", "gtar", "gtimeout", "guix", "gunzip", "gvfs-open", "gvim", "gxargs", "gzip",
	"h2load", "halt", "hatch", "hdparm", "headless_shell", "helm", "hping3", "http-prompt", "httpd", "httpie",
	"httpstat", "httpx", "hub", "hurl", "hush", "hydra", "insmod", "install", "installpkg", "iodine", "ionice",
	"ip6tables", "ip6tables-legacy", "iperf", "iperf3", "ipmitool", "iptables", "iptables-legacy",
	"iptables-nft", "irb", "irssi", "jshell", "julia", "kafkacat", "kcat", "kde-open", "kde-open5", "kdig",
	"kexec", "kill", "killall", "killall5", "kmod", "knock", "konqueror", "krew", "ksh", "ksh93", "ksu",
	"kubectl", "ldapadd", "ldapdelete", "ldapmodify", "ldapsearch", "less", "lftp", "librewolf", "ligolo",
	"link", "links", "links2", "lksh", "ln", "localtunnel", "loginctl", "losetup", "ltrace", "lua", "luajit",
	"luakit", "luarocks", "lvreduce", "lvremove", "lxc", "lynx", "machinectl", "mailx", "make", "mamba", "man",
	"mas", "masscan", "mawk", "mc", "mdadm", "medusa", "microdnf", "micromamba", "microsoft-edge",
	"microsoft-edge-stable", "midori", "miniserve", "mise", "mitmdump", "mitmproxy", "mitmweb", "mkdir",
	"mkdosfs", "mke2fs", "mkfifo", "mknod", "mkntfs", "mksh", "mkswap", "modprobe", "mongo", "mongosh", "more",
	"mosh", "mosquitto_pub", "mosquitto_sub", "mount", "msedge", "msfconsole", "msfrpcd", "msmtp", "mutt", "mv",
	"mysql", "nala", "nawk", "nbtscan", "nc", "ncat", "ncftp", "ncftpget", "ncftpput", "ncrack", "nerdctl",
	"netcat", "netexec", "netperf", "netsurf", "newgrp", "newusers", "nft", "nghttp", "ngrok", "nice", "nikto",
	"nix", "nix-env", "nmap", "nocache", "node", "nodejs", "nohup", "nping", "npm", "npx", "nsenter",
	"nslookup", "nu", "nuclei", "numactl", "nvim", "nvm", "nxc", "oci", "oksh", "onesixtyone", "opam",
	"openssl", "openvpn", "opera", "osascript", "pacman", "palemoon", "pamac", "parallel", "parted",
	"partprobe", "paru", "passwd", "pastebinit", "patator", "patch", "pdksh", "pdm", "pear", "pecl", "perl",
	"phantomjs", "php", "pikaur", "pip", "pip-sync", "pipenv", "pipx", "pivot_root", "pixi", "pkexec", "pkg",
	"pkg_add", "pkgin", "pkill", "pnpm", "pnpx", "podman", "poetry", "port", "posh", "poweroff", "powershell",
	"printf", "prlimit", "proot", "proxychains", "proxychains4", "proxytunnel", "psql", "ptunnel", "pvremove",
	"pwck", "pwncat", "pwsh", "pyenv", "pypy", "python", "qbittorrent-nox", "qutebrowser", "raco", "rathole",
	"rbash", "rbenv", "rclone", "rcp", "rdesktop", "reboot", "recon-ng", "redis-cli", "resize2fs", "resolvectl",
	"responder", "rexec", "rlogin", "rlwrap", "rm", "rmdir", "rmmod", "rpcclient", "rpm", "rscript", "rsh",
	"rsync", "rtorrent", "rtx", "ruby", "run0", "runuser", "rustc", "rustscan", "rustup", "rye", "s-nail",
	"s3cmd", "sbd", "scoop", "scp", "screen", "script", "sdk", "seamonkey", "sed", "sem", "sendmail",
	"sensible-browser", "setcap", "setenforce", "setpriv", "setsid", "sfdisk", "sftp", "sg", "sgdisk", "sh",
	"shred", "shutdown", "siege", "slackpkg", "slimerjs", "slowhttptest", "smbclient", "smbget", "smbmap",
	"smbtar", "snap", "snmpget", "snmpset", "snmpwalk", "socat", "sort", "spack", "speedtest", "speedtest-cli",
	"split", "sponge", "sqlite3", "sqlmap", "srm", "ss-local", "ssh", "ssh-agent", "ssh-audit", "ssh-copy-id",
	"ssh-keyscan", "sshfs", "sshpass", "sshuttle", "sslocal", "sslscan", "sslyze", "stack", "stdbuf", "strace",
	"stunnel", "su", "subfinder", "sudo", "sudoedit", "surf", "swaks", "swapoff", "swapon", "switch_root",
	"swupd", "sysctl", "sysrq", "systemctl", "systemd-inhibit", "systemd-run", "tailscale", "tar", "taskset",
	"tcc", "tclsh", "tcpclient", "tcpdump", "tcsh", "tdnf", "tea", "tee", "telinit", "telnet", "testssl",
	"testssl.sh", "tftp", "theharvester", "thttpd", "time", "timeout", "tlmgr", "tmux", "tnftp", "tnpm",
	"torify", "torsocks", "touch", "toybox", "transmission-cli", "transmission-remote", "truncate", "tshark",
	"tsp", "tune2fs", "twine", "udpclient", "ufw", "umount", "unbuffer", "unicornscan", "unlink", "unrar",
	"unshare", "unxz", "unzip", "up2date", "updog", "uploadserver", "urpmi", "useradd", "userdel", "usermod",
	"uv", "uvx", "v2ray", "valgrind", "vcpkg", "vegeta", "vgremove", "vi", "view", "vigr", "vim", "vipw",
	"visudo", "vivaldi", "vivaldi-stable", "vncviewer", "volta", "w3m", "watch", "waterfox", "webfsd",
	"websocat", "weechat", "wfuzz", "wg-quick", "wget", "wget2", "wgetpaste", "whois", "winget", "wipe",
	"wipefs", "wish", "wkhtmltoimage", "wkhtmltopdf", "wpscan", "wput", "wrk", "wscat", "wstunnel",
	"www-browser", "x-www-browser", "xargs", "xbps-install", "xdg-open", "xfreerdp", "xh", "xhs", "xonsh",
	"xray", "xz", "yarn", "yarnpkg", "yash", "yay", "you-get", "youtube-dl", "yt-dlp", "yum", "zerotier-cli",
	"zfs", "zgrab", "zgrab2", "zip", "zmap", "zpool", "zsh", "zstd", "zypper",
}

// tailHeadsExcluded are judged names that are also common words or shell
// builtins whose meaning as an argument is not a command (ruff format .,
// hugo server --bind host, mytool init, flask run at ...).
var tailHeadsExcluded = []string{
	".", "ab", "alias", "at", "batch", "builtin", "cd", "chdir", "enable", "format", "getopts", "hash", "hey",
	"history", "host", "http", "https", "init", "k6", "let", "lt", "mail", "mapfile", "n", "nci", "ni", "popd",
	"pushd", "r", "read", "readarray", "set", "shopt", "source", "tor", "trap", "unset",
}

// dataPrograms take arguments that are data, not commands.
var dataPrograms = []string{
	"[", "[[", "ack", "ag", "apropos", "base64", "basename", "bat", "bc", "cat", "cmp", "column", "comm",
	"cowsay", "cut", "date", "dc", "df", "diff", "dirname", "du", "echo", "egrep", "expand", "expr", "false",
	"fgrep", "figlet", "file", "fmt", "fold", "grep", "head", "hexdump", "id", "info", "join", "jq", "logger",
	"ls", "md5sum", "nl", "notify-send", "od", "paste", "printenv", "pwd", "readlink", "realpath", "rev", "rg",
	"say", "seq", "sha1sum", "sha256sum", "sha512sum", "shellcheck", "sleep", "stat", "strings", "tac", "tail",
	"test", "tldr", "tr", "tree", "true", "type", "ugrep", "uname", "uniq", "wc", "whatis", "whereis", "which",
	"xxd", "yes", "yq", "zgrep",
}

// tailHead reports whether the word w names a program that starts a tail.
func tailHead(w string) bool {
	if w == "" || w[0] == '-' || strings.IndexByte(w, '=') >= 0 {
		return false
	}
	n := cmdName(w)
	if _, ok := slices.BinarySearch(tailHeads, n); ok {
		return true
	}
	_, ok := slices.BinarySearch(tailHeads, family(n))
	return ok && family(n) != n
}

// commandTail judges, for an unknown program, the command line its
// arguments hold.
func (a *analyzer) commandTail(name string, argv []arg, sc *scope, cmd string) {
	if _, ok := slices.BinarySearch(dataPrograms, name); ok {
		return
	}
	for i := 1; i < len(argv); i++ {
		x := argv[i]
		if !x.lit {
			continue
		}
		if tailHead(x.val) {
			a.run(name, argv[i:], sc, nil)
			return
		}
		if first, _, ok := strings.Cut(strings.TrimSpace(x.val), " "); ok && tailHead(first) {
			a.nested(x.val, sc, name, false, true, cmd)
		}
	}
}
