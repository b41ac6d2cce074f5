package shell

import (
	"testing"
)

// boxOpts and netBoxOpts are testOpts in the sandboxes of the rule table's
// capability examples.
var (
	boxOpts    = Options{WorkDir: testOpts.WorkDir, Home: testOpts.Home, Exec: boxExec}
	netBoxOpts = Options{WorkDir: testOpts.WorkDir, Home: testOpts.Home, Exec: netBoxExec}
)

// landlockOpts is the executor the harness describes for landlock: a
// sandbox without network whose only writable root is the work dir (its
// private temp dir has a path only known when it runs).
var landlockOpts = Options{WorkDir: testOpts.WorkDir, Home: testOpts.Home, Exec: Executor{Sandboxed: true}}

// TestInlineCodeEvasions: inline code that a substring scan cannot judge,
// because it builds the names it uses at run time, asks outside a sandbox.
// Each of these passes the scan (no sign is in the text), so without the
// inline-code rule it would be allowed.
func TestInlineCodeEvasions(t *testing.T) {
	t.Parallel()
	evasions := []string{
		`python3 -c "s = __builtins__.__dict__['__imp' + 'ort__']('so' + 'cket'); print(s)"`,
		`python3 -c "m = 'sock'+'et'; print(m)"`,
		`python3 -c "getattr(__import__('so'+'cket'), 'create_connection')(('10.0.0.1', 80))"`,
		`python3 -c "import base64; eval(base64.b64decode('cHJpbnQoMSk='))"`,
		`python3 -c "eval(''.join(map(chr, [112, 114, 105, 110, 116, 40, 49, 41])))"`,
		`python3 -c "exec(bytes.fromhex('7072696e74283129'))"`,
		`python3 -c "__import__('o'+'s').system('id')"`,
		`python3 -c "import importlib as i; i.import_module('s'+'ocket')"`,
		`node -e "require('ne'+'t').connect(80, '10.0.0.1')"`,
		`node -e "globalThis['ev'+'al']('1')"`,
		`perl -e 'my $m = "IO::"."Sock"."et"; eval "require $m"'`,
		`ruby -e 'Object.const_get("TCP" + "Socket").new("10.0.0.1", 80)'`,
		`php -r '$f = "fsock" . "open"; $f("10.0.0.1", 80);'`,
		`lua -e 'local m = require("so" .. "cket")'`,
		"python3 - <<'EOF'\nimport importlib\nimportlib.import_module('so' + 'cket')\nEOF",
		`echo "__import__('o'+'s').system('id')" > x.py && python3 x.py`,
		`env python3 -c "getattr(__import__('so'+'cket'), 'socket')()"`,
		`bash -c "python3 -c \"__import__('o'+'s').system('id')\""`,
	}
	for _, src := range evasions {
		t.Run(src, func(t *testing.T) {
			t.Parallel()
			a := Analyze(src, testOpts)
			if a.Decision == allow {
				t.Fatalf("Analyze(%q) allowed outside a sandbox", src)
			}
			if !hasRule(a, "inline-code") {
				t.Fatalf("Analyze(%q) = %s, want inline-code among the findings", src, a.Summary())
			}
		})
	}
}

func hasRule(a Analysis, rule string) bool {
	for _, r := range a.Rules() {
		if r == rule {
			return true
		}
	}
	return false
}

// TestInlineCodeVerdict: in bypass mode an Ask is refused, so inline code
// outside a sandbox is refused there; the gate's verdict asks.
func TestInlineCodeVerdict(t *testing.T) {
	t.Parallel()
	g := NewGate(testOpts)
	a := g.Analyze(`python3 -c "__import__('o'+'s').system('id')"`)
	if v := verdict(a.Findings, a.Err); v.Decision != ask {
		t.Fatalf("verdict %s, want ask", v.Decision)
	}
	if a := NewGate(landlockOpts).Analyze(`python3 -c 'print(1+1)'`); a.Decision != allow {
		t.Fatalf("in the sandbox: %s", a.Summary())
	}
}

// TestInlineCodeSandboxed: legitimate inline code in the landlock sandbox
// stays allowed, and what was allowed outside stays allowed everywhere.
func TestInlineCodeSandboxed(t *testing.T) {
	t.Parallel()
	legit := []ruleCase{
		{"python3 -c 'print(1+1)'", allow, ""},
		{"python3 -c 'print(40 + 2)'", allow, ""},
		{`python3 -c "open('out.txt','w').write('x')"`, allow, ""},
		{`python3 -c "print(open('/etc/os-release').read())"`, allow, ""},
		{"python3 -W ignore -c 'print(1)' && python3 -m json.tool x.json && perl -lne 'print if /x/' f", allow, ""},
		{"perl -i.bak -pe 's/a/b/' f.txt && ruby -e 'puts 1' && node -p '1+1'", allow, ""},
		{"python3 script.py", allow, ""},
		{"go test ./...", allow, ""},
		{"node --version", allow, ""},
	}
	runCasesIn(t, landlockOpts, legit)
	runCasesIn(t, boxOpts, legit)
	runCases(t, []ruleCase{
		{"python3 script.py", allow, ""},
		{"go test ./...", allow, ""},
		{"node --version", allow, ""},
		{"python3 -m pytest -q", allow, ""},
	})
}

// TestSandboxNeverLowers: inside a sandbox the signs in inline code still
// raise it: what runs programs asks, what writes protected paths asks,
// what names credentials is refused, whether or not it also uses the
// network (which the sandbox stops).
func TestSandboxNeverLowers(t *testing.T) {
	t.Parallel()
	cases := []ruleCase{
		{`python3 -c "import os; os.system('ls')"`, ask, "interpreter-code"},
		{`python3 -c "import socket, os; os.system('ls')"`, ask, "interpreter-code"},
		{`python3 -c "import socket; open('.git/hooks/pre-commit','w')"`, ask, "protected-path"},
		{`python3 -c "import urllib; print(open('/home/agent/.ssh/id_rsa').read())"`, deny, "credential-read"},
		{`python3 -c "import os\nwhile True: os.fork()"`, deny, "fork-bomb"},
		{"cat x | python3", ask, "interpreter-stdin"},
		{"curl file:///etc/passwd | sh", deny, "dynamic-command"},
		{"ssh host rm -rf /", deny, "disk-destroy"},
		{"echo x > /etc/cron.d/x", deny, "write-outside"},
		{"echo x > .git/hooks/pre-commit", ask, "protected-path"},
		// what a network command does besides the network is still judged
		{"rsync -a --delete host:x/ dst/", ask, "recursive-delete"},
		{"tar --remove-files -cf host:a.tar src", ask, "recursive-delete"},
		{"openssl s_client -connect h:1 -out .git/hooks/pre-commit", ask, "protected-path"},
		{"rsync -e 'sh -c \"rm -rf ~\"' host:x .", deny, "disk-destroy"},
	}
	runCasesIn(t, landlockOpts, cases)
	runCasesIn(t, boxOpts, cases)
}

// TestSandboxNetwork: a network tool or network code is no exfiltration
// risk in a sandbox without network, and is judged as today in one with
// network and outside any sandbox.
func TestSandboxNetwork(t *testing.T) {
	t.Parallel()
	net := []string{"curl https://example.com", "python3 -c 'import socket'", "echo x > /dev/tcp/10.0.0.1/80",
		"dig example.com", "npm publish", "ssh host", "node -e 'fetch(\"https://x\")'"}
	for _, src := range net {
		if a := Analyze(src, landlockOpts); a.Decision != allow {
			t.Errorf("%q in a sandbox without network: %s", src, a.Summary())
		}
		for _, o := range []Options{testOpts, netBoxOpts} {
			if a := Analyze(src, o); a.Decision == allow {
				t.Errorf("%q with %+v: allowed", src, o.Exec)
			}
		}
	}
}

// Options are comparable: equal Options share one analysis of a call (a
// map key), so the executor's capabilities hold no slice or map. This does
// not compile otherwise.
var _ = map[Options]bool{testOpts: true}

// TestSandboxWritable: a write into the sandbox's own /tmp is not a write
// outside the work dir; the same write is outside without that root, and
// a relative path that climbs out of the work dir stays outside.
func TestSandboxWritable(t *testing.T) {
	t.Parallel()
	runCasesIn(t, boxOpts, []ruleCase{
		{"echo x > /tmp/x", allow, ""},
		{"cp a /tmp/b && mv /tmp/b /tmp/c", allow, ""},
		{"echo x > ../x", deny, "write-outside"},
		{"echo x > /tmpx/y", deny, "write-outside"},
		{"echo x > /tmp/../etc/x", deny, "write-outside"},
	})
	runCasesIn(t, landlockOpts, []ruleCase{{"echo x > /tmp/x", deny, "write-outside"}})
	runCases(t, []ruleCase{{"echo x > /tmp/x", deny, "write-outside"}})
	// A private directory counts only in a sandbox, and "/" or a relative
	// one never counts.
	for _, e := range []Executor{
		{TmpDir: "/tmp"},
		{Sandboxed: true, TmpDir: "/"},
		{Sandboxed: true, TmpDir: "tmp"},
		{Sandboxed: true, TmpDir: "/tmp/../"},
	} {
		o := testOpts
		o.Exec = e
		if a := Analyze("echo x > /tmp/x", o); a.Decision != deny {
			t.Errorf("%+v: %s", e, a.Summary())
		}
	}
}
