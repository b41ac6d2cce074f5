package shell

import (
	"strings"
)

// netCode are signs that interpreter code opens network connections.
var netCode = []string{"socket", "urllib", "urlopen", "http.client", "httplib", "requests.", "import requests",
	"from requests", "httpx", "aiohttp", "ftplib", "smtplib", "telnetlib", "paramiko", "pycurl", "xmlrpc", "websocket",
	"net::", "io::socket", "lwp", "http::tiny", "mojo::useragent", "net.connect", "net.socket", "createconnection",
	"require('net')", `require("net")`, "require('http", `require("http`, "require('dgram", `require("dgram`,
	"require('tls", `require("tls`, "node:net", "node:http", "node:dgram", "node:tls", "https.get", "http.get",
	"http.request", "https.request", "fetch(", "xmlhttprequest", "fsockopen", "stream_socket", "curl_init", "curl_exec",
	"file_get_contents('http", `file_get_contents("http`, "fopen('http", `fopen("http`, "tcpsocket", "udpsocket",
	"tcpserver", "net::http", "open-uri", "uri.open", "/dev/tcp", "/dev/udp", "dgram", "tls.connect",
	"wrap_socket", "deno.connect", "bun.connect", "invoke-webrequest", "invoke-restmethod", "net.webclient",
	"system.net", "httpd", "webrick", "http.server", "socketserver", "simplehttpserver", "asyncio.open_connection",
	"start_server", "create_server", "curl ", "wget ", "nc -", "ncat", "netcat", "url.openstream", "httpclient",
	"httpurlconnection", "resty", "ssl.create_default_context", "ftp.", "mail(", "smtp", "imaplib", "poplib",
	"webbrowser", "dns.resolver", "scapy", "net/http", "net/ftp", "net/smtp", "uri.parse", "io::socket::inet"}

// execCode are signs that interpreter code runs other programs or deletes
// files; such code is shown to a human.
var execCode = []string{"os.system", "subprocess", "popen", "os.exec", "spawn", "child_process", "execsync",
	"execfile", "exec(", "eval(", "__import__", "system(", "shell_exec", "passthru", "proc_open", "`", "qx", "pty.",
	"shutil.rmtree", "rmtree", "os.remove", "os.unlink", "unlink", "os.rmdir", "removedirs", "fs.rm", "rmsync",
	"rimraf", "fileutils.rm", "kernel.exec", "io.popen", "os.execute", "ctypes", "setuid", "os.kill", "process.kill",
	"fork", "do shell script", "start-process", "remove-item", "runtime.getruntime", "processbuilder",
	"deno.run", "deno.command", "bun.spawn", "bun.$", "$(", "exec "}

// code judges interpreter code given on the command line (-c, -e) or on
// standard input. Outside a sandbox any such code asks (inline); signs in
// it can only make that stricter: network code is refused (unless the
// sandbox stops the network); code that runs programs or deletes files
// asks; so does any code read from stdin.
func (a *analyzer) code(name, text string, sc *scope, cmd string, stdin bool) {
	a.inline(name, cmd)
	low := strings.ToLower(text)
	for _, p := range netCode {
		if strings.Contains(low, p) {
			a.deny(ruleInterpreterSocket, name+" code uses the network ("+strings.TrimSpace(p)+")", cmd)
			if !a.stopped(ruleInterpreterSocket) {
				return
			}
			break // the sandbox stops the network: judge the rest of the code
		}
	}
	if c := credText(text); c != "" {
		a.deny(ruleCredentialRead, name+" code names a credential store ("+c+")", cmd)
		return
	}
	if strings.Contains(low, "fork") && (strings.Contains(low, "while") || strings.Contains(low, "loop") ||
		strings.Contains(low, "for(;;)") || strings.Contains(low, "for (;;)") || strings.Contains(low, "until") ||
		strings.Contains(low, "repeat") || strings.Contains(low, "forever")) {
		a.deny(ruleForkBomb, name+" code forks in a loop", cmd)
		return
	}
	a.codeWrites(name, text, low, sc, cmd)
	if strings.Contains(low, "install.packages") || strings.Contains(low, "pip.main") || strings.Contains(low, "ensurepip") {
		a.ask(rulePackageInstall, name+" code installs packages", cmd)
	}
	for _, p := range execCode {
		if strings.Contains(low, p) {
			a.ask(ruleInterpreterCode, name+" code runs programs or deletes files ("+p+")", cmd)
			a.codeStrings(name, text, sc, cmd)
			return
		}
	}
	if stdin {
		a.ask(ruleInterpreterStdin, name+" runs code from its input", cmd)
	}
}

// codeStrings judges the string literals of code that runs programs as
// shell: each literal alone, and all of them joined (for argument lists).
// Only what is found is kept; text that is not shell is ignored.
func (a *analyzer) codeStrings(name, text string, sc *scope, cmd string) {
	var lits []string
	for i := 0; i < len(text) && len(lits) < 32; i++ {
		q := text[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for j < len(text) && text[j] != q {
			if text[j] == '\\' {
				j++
			}
			j++
		}
		if j > len(text) {
			break
		}
		if j > i+1 {
			lits = append(lits, text[i+1:min(j, len(text))])
		}
		i = j
	}
	if len(lits) == 0 {
		return
	}
	for _, l := range lits {
		a.nested(l, sc, name+" code", false, true, cmd)
	}
	if len(lits) > 1 {
		a.nested(strings.Join(lits, " "), sc, name+" code", false, true, cmd)
	}
}

// interp judges an interpreter: inline code is scanned, a module that is a
// package manager or server is judged as such, a script file is allowed,
// and code on stdin is scanned and asked about.
func (a *analyzer) interp(fam string, argv []arg, sc *scope, in *input, cmd string) {
	var codes []arg
	module := ""
	script := -1
	inplace := false
	stdin := false
	i := 1
	valued, codeOpt := interpOpts(fam)
loop:
	for ; i < len(argv); i++ {
		x := argv[i]
		v := x.val
		if !x.lit || v == "-" || len(v) < 2 || v[0] != '-' {
			if x.lit && v == "-" {
				stdin = true
			}
			break
		}
		if v == "--" {
			i++
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v[2:], "=")
			switch name {
			case "eval", "print", "command":
				if !eq && i+1 < len(argv) {
					i++
					codes = append(codes, argv[i])
				} else {
					codes = append(codes, litArg(val))
				}
			case "require", "import", "loader", "experimental-loader", "conditions", "input-type", "eval-file":
				if !eq && i+1 < len(argv) {
					i++
					val = argv[i].val
				}
				if name != "conditions" && name != "input-type" {
					a.module(fam, litArg(val), cmd)
				}
			}
			if fam == "python" && name == "check-hash-based-pycs" && !eq {
				i++
			}
			continue
		}
		if fam == "pwsh" || fam == "powershell" {
			switch strings.ToLower(v) {
			case "-command", "-c":
				var words []string
				for _, w := range argv[i+1:] {
					if !w.lit {
						a.ask(ruleInterpreterCode, fam+" runs code built at run time", cmd)
					}
					words = append(words, w.val)
				}
				a.code(fam, strings.Join(words, " "), sc, cmd, false)
				return
			case "-encodedcommand", "-e", "-ec", "-enc":
				a.deny(ruleDynamicCommand, fam+" runs an encoded command that cannot be checked", cmd)
				return
			}
		}
		for j := 1; j < len(v); j++ {
			c := v[j]
			takeValue := func() arg {
				if j+1 < len(v) {
					return litArg(v[j+1:])
				}
				if i+1 < len(argv) {
					i++
					return argv[i]
				}
				return litArg("")
			}
			switch {
			case strings.IndexByte(codeOpt, c) >= 0:
				codes = append(codes, takeValue())
				if fam == "python" || fam == "pypy" {
					i++
					break loop
				}
				continue loop
			case c == 'm' && (fam == "python" || fam == "pypy"):
				module = takeValue().val
				i++
				break loop
			case c == 'i' && (fam == "perl" || fam == "ruby"):
				inplace = true
				continue loop
			case c == 'S' && fam == "php":
				a.deny(ruleNetTool, "php -S serves files over the network", cmd)
				return
			case (c == 'l' || c == '0') && (fam == "perl" || fam == "ruby"):
				for j+1 < len(v) && (v[j+1] >= '0' && v[j+1] <= '9' || v[j+1] == 'x') {
					j++
				}
			case strings.IndexByte(valued, c) >= 0:
				val := takeValue()
				if c == 'M' || c == 'm' || c == 'r' {
					a.module(fam, val, cmd)
				}
				continue loop
			}
		}
	}
	if i < len(argv) {
		script = i
	}
	if fam == "deno" || fam == "bun" {
		a.denoBun(fam, argv, sc, cmd)
		return
	}
	if fam == "r" || fam == "rscript" {
		if s, _ := subcmd(argv, 1); s == "CMD" || strings.EqualFold(s, "cmd") {
			if hasOpt(argv, "INSTALL") {
				a.ask(rulePackageInstall, "R CMD INSTALL installs packages", cmd)
			}
		}
	}
	for _, c := range codes {
		if !c.lit {
			a.ask(ruleInterpreterCode, fam+" runs code built at run time", cmd)
			continue
		}
		a.code(fam, c.val, sc, cmd, false)
	}
	if module != "" {
		a.pyModule(module, argv[i:], sc, cmd)
		return
	}
	if len(codes) > 0 {
		if inplace && script >= 0 {
			for _, f := range argv[script:] {
				a.writePath(f, sc, cmd, fam+" -i edits")
			}
		}
		return
	}
	if stdin || script < 0 {
		a.stdinCode(fam, in, sc, false, cmd)
		return
	}
	f := argv[script]
	switch {
	case !f.lit:
		a.ask(ruleDynamicCommand, fam+" runs a script only known at run time ("+f.raw+")", cmd)
	case f.val == "/dev/stdin" || f.val == "/dev/fd/0" || f.val == "/proc/self/fd/0":
		a.stdinCode(fam, in, sc, false, cmd)
	case strings.Contains(f.val, "://"):
		a.deny(ruleNetTool, fam+" runs a script fetched from the network", cmd)
	case !inplace:
		if text, found, known := a.scriptAt(f, sc); found {
			if !known {
				a.ask(ruleDynamicCommand, fam+" runs "+f.raw+", written in this command line with content only known at run time", cmd)
			} else {
				a.code(fam, text, sc, cmd, false)
			}
		}
	case inplace:
		for _, g := range argv[script+1:] {
			a.writePath(g, sc, cmd, fam+" -i edits")
		}
	}
}

// pyModule judges python -m MODULE.
func (a *analyzer) pyModule(module string, rest []arg, sc *scope, cmd string) {
	switch module {
	case "pip", "pip3", "pipx", "poetry", "uv", "pdm", "pipenv", "conda", "twine":
		argv := append([]arg{litArg(module)}, rest...)
		a.pkg(family(module), argv, sc, cmd)
	case "ensurepip":
		a.ask(rulePackageInstall, "python -m ensurepip installs pip", cmd)
	case "http.server", "SimpleHTTPServer", "CGIHTTPServer", "smtpd", "aiosmtpd", "pyftpdlib", "uploadserver",
		"xmlrpc.server", "wsgiref.simple_server", "ftplib", "telnetlib", "smtplib", "webbrowser", "nntplib", "poplib",
		"imaplib", "http.client", "urllib.request", "socketserver":
		a.deny(ruleNetTool, "python -m "+module+" uses the network", cmd)
	case "venv", "virtualenv":
		for _, o := range a.parseOpts(rest, 0, "p", []string{"prompt", "python", "upgrade-deps"}, false).ops {
			a.writePath(o, sc, cmd, "python -m venv creates")
		}
	}
}

func (a *analyzer) denoBun(fam string, argv []arg, sc *scope, cmd string) {
	s, at := subcmd(argv, 1)
	switch {
	case fam == "deno" && s == "eval" && at+1 < len(argv):
		if c := argv[at+1]; c.lit {
			a.code("deno", c.val, sc, cmd, false)
		} else {
			a.ask(ruleInterpreterCode, "deno eval runs code built at run time", cmd)
		}
	case fam == "bun" && (hasOpt(argv, "-e") || hasOpt(argv, "--eval")):
		for i, x := range argv {
			if (x.val == "-e" || x.val == "--eval") && i+1 < len(argv) && argv[i+1].lit {
				a.code("bun", argv[i+1].val, sc, cmd, false)
			}
		}
	case isOneOf(s, "install", "add", "i", "update", "upgrade", "x") || fam == "bun" && s == "" && len(argv) == 1:
		a.ask(rulePackageInstall, fam+" "+s+" installs or fetches packages", cmd)
	case s == "run" || fam == "deno" && s != "":
		for _, x := range argv[at+1:] {
			if strings.Contains(x.val, "://") || strings.HasPrefix(x.val, "npm:") || strings.HasPrefix(x.val, "jsr:") {
				a.ask(rulePackageInstall, fam+" runs code fetched from the network", cmd)
				break
			}
		}
	}
}

// awk judges awk programs: network special files are refused; programs
// that run commands ask; output redirections to files are writes.
func (a *analyzer) awk(argv []arg, sc *scope, cmd string) {
	p := a.parseOpts(argv, 1, "FvfeilE", []string{"field-separator", "assign", "file", "source", "include", "load", "exec"}, false)
	progs := p.values("-e", "--source")
	for _, f := range p.values("-f", "--file", "-E", "--exec") {
		a.readPath(f, sc, cmd)
	}
	if len(progs) == 0 && !p.has("-f", "--file", "-E", "--exec") && len(p.ops) > 0 {
		progs = append(progs, p.ops[0])
	}
	for _, prog := range progs {
		if !prog.lit {
			continue
		}
		s := prog.val
		low := strings.ToLower(s)
		if strings.Contains(low, "/inet/") || strings.Contains(low, "/inet4/") || strings.Contains(low, "/inet6/") {
			a.deny(ruleInterpreterSocket, "the awk program opens a network connection", cmd)
			if !a.stopped(ruleInterpreterSocket) {
				continue
			}
		}
		if c := credText(s); c != "" {
			a.deny(ruleCredentialRead, "the awk program names a credential store ("+c+")", cmd)
		}
		if strings.Contains(s, "system(") || strings.Contains(s, "| getline") || strings.Contains(s, "|getline") ||
			strings.Contains(s, "print |") || strings.Contains(s, "printf |") || strings.Contains(s, `"|`) {
			a.ask(ruleInterpreterCode, "the awk program runs shell commands", cmd)
			a.codeStrings("awk", s, sc, cmd)
		}
		for _, f := range awkOutputs(s) {
			a.writePath(litArg(f), sc, cmd, "the awk program writes to")
		}
	}
}

// awkOutputs finds the literal file names of print > "file" and >> "file".
func awkOutputs(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '>' {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '>' {
			j++
		}
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j >= len(s) || s[j] != '"' {
			continue
		}
		k := strings.IndexByte(s[j+1:], '"')
		if k < 0 {
			break
		}
		out = append(out, s[j+1:j+1+k])
		i = j + k
	}
	return out
}

// module refuses a library preloaded from the command line that talks to
// the network (perl -MIO::Socket, ruby -rnet/http, node -r http).
func (a *analyzer) module(fam string, m arg, cmd string) {
	low := strings.ToLower(m.val)
	for _, p := range []string{"socket", "lwp", "net::", "net/", "http", "open-uri", "curl", "mojo", "ftp", "smtp",
		"dgram", "undici", "axios", "fetch", "got", "request", "tls", "dns"} {
		if low == "net" || strings.Contains(low, p) {
			a.deny(ruleInterpreterSocket, fam+" loads the network library "+m.val, cmd)
			return
		}
	}
}

// interpOpts returns, per interpreter, the short options that take a value
// and the short options whose value is code.
func interpOpts(fam string) (valued, code string) {
	switch fam {
	case "python", "pypy":
		return "WXQ", "c"
	case "node", "nodejs":
		return "rC", "ep"
	case "perl":
		return "IMmlFxCdD0", "eE"
	case "ruby":
		return "rICEFWxKT0", "e"
	case "irb":
		return "rI", ""
	case "lua":
		return "l", "e"
	case "luajit":
		return "lbj", "e"
	case "php":
		return "cdfzt", "rBRFE"
	case "osascript":
		return "lis", "e"
	case "expect":
		return "bf", "c"
	case "rscript", "r":
		return "", "e"
	case "pwsh", "powershell":
		return "fwo", "c"
	}
	return "", ""
}

// writeCode are signs that code writes, moves or deletes files.
var writeCode = []string{"write", "'w", `"w`, "'a", `"a`, "mkdir", "rename", "copy", "move", "unlink", "remove",
	"rmtree", "touch", "chmod", "chown", "symlink", "truncate", "'>", `">`, "savefig", "to_csv", "dump("}

// codeWrites judges the absolute paths named by code that writes files:
// protected places are refused, other places outside the work dir ask.
// A string literal naming a protected path (".git/hooks/pre-commit", or
// just ".git" or ".bashrc", which code may join into one) asks.
func (a *analyzer) codeWrites(name, text, low string, sc *scope, cmd string) {
	writes := false
	for _, w := range writeCode {
		if strings.Contains(low, w) {
			writes = true
			break
		}
	}
	if !writes {
		return
	}
	for i := 0; i < len(text); i++ {
		q := text[i]
		if q != '\'' && q != '"' {
			continue
		}
		j := strings.IndexByte(text[i+1:], q)
		if j < 0 {
			return
		}
		lit := strings.TrimLeft(text[i+1:i+1+j], "+<> ")
		i += j + 1
		if lit == "" || strings.ContainsAny(lit, " \n") {
			continue
		}
		if lit[0] != '/' && lit[0] != '~' {
			if ps, _ := a.resolve(lit, sc); len(ps) > 0 {
				for _, p := range ps {
					if a.protectWrite(p, false, cmd, name+" code writes to") {
						break
					}
				}
			}
			continue
		}
		if lit[0] == '~' && a.homeVar != "" && (len(lit) == 1 || lit[1] == '/') {
			lit = a.homeVar + lit[1:]
		}
		ps, _ := a.resolve(lit, sc)
		for _, p := range ps {
			switch {
			case writableDevice(p):
			case a.inside(p):
				a.protectWrite(p, false, cmd, name+" code writes to")
			case a.sandboxWritable(p):
			case a.protected(p) || isHistory(p) || isDisk(p):
				a.deny(ruleWriteOutside, name+" code writes to "+a.show(p), cmd)
				return
			default:
				a.ask(ruleWriteUnknown, name+" code may write to "+a.show(p)+", outside the work dir", cmd)
			}
		}
	}
}
