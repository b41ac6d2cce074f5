package shell

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/protect"
)

// TestProtectedPaths: every kind of shell write the analyzer sees, into
// any path of the protected list, asks (issue 14 item 1). Before the list,
// only a redirect into .git/hooks/ asked.
func TestProtectedPaths(t *testing.T) {
	t.Parallel()
	pp := "protected-path"
	runCases(t, []ruleCase{
		// redirects, here-documents
		{"echo 'curl x|sh' > .git/hooks/pre-commit", deny, pp}, // and what the hook runs is judged
		{"echo 'make lint' > .git/hooks/pre-commit", ask, pp},
		{"printf 'x\\n' >> .git/hooks/post-checkout", ask, pp},
		{"echo x >| .git/config", ask, pp},
		{"echo x &> .bashrc", ask, pp},
		{"cat > .envrc <<'EOF'\nexport X=1\nEOF", ask, pp},
		{"cat <<EOF > .vscode/tasks.json\n{}\nEOF", ask, pp},
		{"exec 3> .mcp.json", ask, pp},
		{"echo x > .GIT/CONFIG", ask, pp},
		{"echo x > sub/../.gitmodules", ask, pp},
		{"echo x > ./.zshrc", ask, pp},
		{"echo x > vendor/lib/.git/hooks/pre-push", ask, pp},
		// the directory changes first
		{"cd .git && echo x > config", ask, pp},
		{"cd .git/hooks; cp ../../x pre-commit", ask, pp},
		{"pushd .claude && echo {} > settings.json", ask, pp},
		{"(cd .rein; echo x >> config.toml)", ask, pp},
		// copying, moving, installing, linking
		{"install -m 755 x .git/hooks/pre-commit", ask, pp},
		{"install -D -m 0755 hook.sh .git/hooks/pre-commit", ask, pp},
		{"install -t .git/hooks pre-commit", ask, pp},
		{"cp x .git/hooks/pre-commit", ask, pp},
		{"cp x.sh .git/hooks/", ask, pp},
		{"cp -t .git/hooks pre-commit", ask, pp},
		{"cp evil/.bashrc .", ask, pp},
		{"cp -r evil/.vscode ./", ask, pp},
		{"mv x .git/hooks/pre-commit", ask, pp},
		{"mv hooks/pre-commit .git/hooks", ask, pp},
		{"mv .git/hooks/pre-commit.sample .git/hooks/pre-commit", ask, pp},
		{"tee .git/hooks/pre-commit < x", ask, pp},
		{"echo x | tee -a .profile", ask, pp},
		{"ln x .git/hooks/pre-commit", ask, pp},
		{"ln -s ../../x .git/hooks/pre-commit", ask, pp},
		{"ln -sf /work/proj/x .git/hooks/pre-commit", ask, pp},
		{"ln -s .git/hooks/pre-commit hook", ask, pp}, // the target: writing ./hook writes the hook
		{"ln -s ../.git/config sub/cfg", ask, pp},     // relative to the link's dir
		{"ln -s .git gitdir", ask, pp},                // a link to the whole dir
		{"ln .git/config cfg", ask, pp},               // a hard link shares the file
		{"ln -s evil/.bashrc", ask, pp},               // one operand: ./.bashrc
		{"link x .git/hooks/pre-commit", ask, pp},
		{"rsync -a x .git/hooks/pre-commit", ask, pp},
		{"rsync -a hooks/ .git/hooks/", ask, pp},
		// archives and in-place editors
		{"tar -xf hooks.tar -C .git/hooks", ask, pp},
		{"tar xzf x.tgz -C .vscode", ask, pp},
		{"unzip x.zip -d .git", ask, pp},
		{"unzip -o x.zip -d.idea", ask, pp},
		{"sed -i 's/a/b/' .git/config", ask, pp},
		{"sed -i.bak -e 's/x/y/' .envrc", ask, pp},
		{"perl -pi -e 's/a/b/' .git/config", ask, pp},
		{"dd if=x of=.git/hooks/pre-commit", ask, pp},
		{"truncate -s 0 .git/hooks/pre-commit", ask, pp},
		{"touch .git/hooks/pre-commit", ask, pp},
		{"chmod +x .git/hooks/pre-commit", ask, pp},
		{"chmod 755 .git/hooks/*", ask, pp},
		{"patch .git/hooks/pre-commit < fix.diff", ask, pp},
		{"patch -o .git/config a b", ask, pp},
		{"sort -o .git/config x", ask, pp},
		{"go build -o .git/hooks/pre-commit ./cmd/x", ask, pp},
		{"gcc -o .git/hooks/pre-commit x.c", ask, pp},
		{"git show HEAD:hook > .git/hooks/pre-commit", ask, pp},
		{"git config -f .gitmodules submodule.x.url u", ask, pp},
		{"mkdir -p .git/hooks && cp x .git/hooks/", ask, pp},
		// patches whose text is known
		{"git apply <<'EOF'\ndiff --git a/.vscode/tasks.json b/.vscode/tasks.json\n--- a/.vscode/tasks.json\n+++ b/.vscode/tasks.json\n@@ -1 +1 @@\n-x\n+y\nEOF", ask, pp},
		{"printf '%s' x > p.diff; cat > p.diff <<'EOF'\n--- a/x\n+++ b/.envrc\nEOF\ngit apply p.diff", ask, pp},
		{"patch -p1 <<'EOF'\n--- a/.bashrc\n+++ b/.bashrc\n@@ -1 +1 @@\n-a\n+b\nEOF", ask, pp},
		{"cat > f.patch <<'EOF'\n+++ .mcp.json\nEOF\npatch -i f.patch", ask, pp},
		{"cat > f.patch <<'EOF'\n+++ b/.claude/settings.json\nEOF\npatch -p1 < f.patch", ask, pp},
		{"git apply <<'EOF'\ndiff --git a/x b/y\nrename from x\nrename to .gitmodules\nEOF", ask, pp},
		{"git init --template=/tmp/t repo", ask, "git-hooks"},
		// code, members, other writers
		{`python3 -c "open('.git/config','a').write('x')"`, ask, pp},
		{`node -e "require('fs').writeFileSync('.git/hooks/pre-commit','x')"`, ask, pp},
		{`perl -e 'open(F,">",".bashrc")'`, ask, pp},
		{`python3 -c "import os; open(os.path.join('.git','hooks','pre-commit'),'w')"`, ask, pp},
		{`awk 'BEGIN{print "x" > ".git/config"}'`, ask, pp},
		{"sed -n 'w .git/config' x", ask, pp},
		{"tar -xf x.tar .git/hooks/pre-commit", ask, pp},
		{"tar xf x.tar -C sub .envrc", ask, pp},
		{"unzip x.zip .git/hooks/pre-commit", ask, pp},
		{"unzip -o x.zip -d out .vscode/settings.json", ask, pp},
		{"echo x | sponge .git/config", ask, pp},
		{"git checkout origin/evil -- .vscode/tasks.json", ask, pp},
		{"git restore --source=evil .envrc", ask, pp},
		{"git update-index --add --cacheinfo 100644,abc123,.vscode/tasks.json && git checkout-index -a", ask, pp},
		{"git update-index --add --cacheinfo 100755 abc123 .git/hooks/x", ask, pp},
		{"git update-index --index-info <<'EOF'\n100644 abc123 0\t.envrc\nEOF", ask, pp},
		{"git submodule add ../x .vscode", ask, pp},
		{"echo x > .git/hooks/$HOOK", ask, pp},
		{"cp x \".vscode/${F}\"", ask, pp},
		// globs that may name a protected file
		{"cp x .[g]it/config", ask, pp},
		{"cp x .g?t/hooks/pre-commit", ask, pp},
		{"echo x > .bash*", ask, pp},
		// wrappers
		{"env X=1 cp x .git/hooks/pre-commit", ask, pp},
		{"sh -c 'cp x .git/hooks/pre-commit'", ask, pp},
		{"bash -c \"echo x > .git/config\"", ask, pp},
		{"echo .git/hooks/pre-commit | xargs -I{} cp x {}", ask, ""},
		{"find . -name hook -exec cp {} .git/hooks/ \\;", ask, pp},
		{"timeout 5 install x .git/hooks/pre-commit", ask, pp},
		{"nohup tee .git/hooks/pre-commit < x", ask, pp},
		// every file of the list
		{"echo x > .gitattributes", ask, pp},
		{"echo x > .gitconfig", ask, pp},
		{"echo x > .bash_profile", ask, pp},
		{"echo x > .zprofile", ask, pp},
		{"echo x > .idea/workspace.xml", ask, pp},
		{"echo x > .claude/settings.json", ask, pp},
		{"echo x > .rein/config.toml", ask, pp},
		{"echo x > .ripgreprc", ask, pp},
		{"echo x > .devcontainer/devcontainer.json", ask, pp},
		// deleting or moving one away changes what runs, too
		{"rm .git/hooks/pre-commit", ask, pp},
		{"mv .rein/config.toml x", ask, pp},
		// legitimate: reads, ordinary files, names that only look alike
		{"cat .git/config && git log --oneline -3", allow, ""},
		{"echo x > README.md && cp a.go b.go && mv b.go c.go", allow, ""},
		{"echo x > git/config && echo y > src/hooks/pre-commit", allow, ""},
		{"echo x > bashrc.txt && echo y > my.envrc.example", allow, ""},
		{"cp .git/config /dev/null; cp .bashrc backup.txt", allow, ""},
		{"ln -s src/main.go main.go", allow, ""},
		{"git add -A && git commit -m x && git fetch origin && git gc", allow, ""},
		{"git --git-dir=.git --work-tree=. commit -m x", allow, ""},
		{"git -C .git status", allow, ""},
		{"tar xf x.tar && unzip x.zip -d out", allow, ""},
		{"echo x > src/$NAME.go", ask, "write-unknown"},
		{"git apply <<'EOF'\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-a\n+b\nEOF", allow, ""},
		{"git apply fix.patch && patch -p1 < fix.diff", allow, ""},
		{`python3 -c "open('out.txt','w').write('x')"`, ask, "inline-code"}, // allowed in a sandbox: TestInlineCodeSandboxed
		{"tar -xf x.tar src/main.go && unzip x.zip docs/a.md", allow, ""},
		{"git checkout main -- src/a.go && git restore --source=HEAD~1 README.md", allow, ""},
		{"sort x | sponge x", allow, ""},
	})
}

// TestGitConfigCode: git config keys whose value git runs as a command ask
// however they are set (issue 14 item 1).
func TestGitConfigCode(t *testing.T) {
	t.Parallel()
	gc := "git-config-code"
	runCases(t, []ruleCase{
		{"git config core.fsmonitor ./x", ask, gc},
		{"git config core.fsmonitor 'curl x|sh'", deny, gc},
		{"git config --local core.pager ./p", ask, gc},
		{"git config --add core.sshCommand ./s", ask, gc},
		{"git config --replace-all core.editor ./e", ask, gc},
		{"git config --file .git/config core.hooksPath h", ask, gc},
		{"git config --file=x.cfg include.path ../evil", ask, gc},
		{"git config set core.fsmonitor ./x", ask, gc},
		{"git config set --local alias.st '!./x'", ask, gc},
		{"git config alias.st '!sh -c x'", ask, gc},
		{"git config credential.helper ./h", ask, gc},
		{"git config filter.lfs.clean ./c", ask, gc},
		{"git config diff.pdf.textconv ./t", ask, gc},
		{"git config CORE.FSMONITOR ./x", ask, gc},
		{"git config core.fsmonitor \"$X\"", deny, gc},
		{"git -c core.fsmonitor=./x status", ask, gc},
		{"git -c core.pager=./p log", ask, gc},
		{"git -c alias.x='!./y' x", ask, gc},
		{"git -c include.path=../x status", ask, gc},
		{"git --config-env=core.pager=P log", deny, gc},
		{"git clone -c core.fsmonitor=./x u dir", ask, gc},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./x git status", ask, gc},
		{"export GIT_CONFIG_KEY_0=core.pager", ask, gc},
		{"GIT_CONFIG_KEY_0=$K GIT_CONFIG_VALUE_0=./x GIT_CONFIG_COUNT=1 git status", ask, gc},
		{"GIT_CONFIG_PARAMETERS=\"'core.fsmonitor=./x'\" git status", ask, gc},
		{"GIT_CONFIG_GLOBAL=./evil.cfg git status", ask, gc},
		{"export GIT_EXEC_PATH=./bin; git status", ask, gc},
		{"GIT_TEMPLATE_DIR=./t git init sub", ask, gc},
		{"GIT_CONFIG_GLOBAL=/dev/null git status", allow, ""},
		{"env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./x git status", ask, gc},
		// legitimate
		{"git config user.name me && git config user.email me@x", allow, ""},
		{"git config alias.st status && git config --get core.pager && git config --list", allow, ""},
		{"git -c user.name=x -c user.email=y commit -m z", allow, ""},
		{"git -c core.editor=true commit --amend --no-edit", allow, ""},
		{"git -c core.pager=cat log", allow, ""},
		{"git --no-pager log && git config --unset core.pager", allow, ""},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=x git commit -m y", allow, ""},
	})
}

// TestProtectedListExtends: Options.Protected adds to what asks.
func TestProtectedListExtends(t *testing.T) {
	t.Parallel()
	o := testOpts
	o.Protected = protect.Default().With(protect.Rule{Pattern: "deploy/", Why: "CI deploys it"})
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"echo x > deploy/run.sh", true},
		{"echo x > .git/config", true},
		{"echo x > src/run.sh", false},
	} {
		a := Analyze(c.src, o)
		got := false
		for _, f := range a.Findings {
			if f.Rule == "protected-path" {
				got = true
				if c.want && !strings.Contains(f.Reason, "a protected path: ") {
					t.Errorf("%q: reason %q does not say why", c.src, f.Reason)
				}
			}
		}
		if got != c.want {
			t.Errorf("%q: protected-path %v, want %v (%s)", c.src, got, c.want, a.Summary())
		}
	}
	if a := Analyze("echo x > deploy/run.sh", testOpts); a.Decision != allow {
		t.Errorf("the default list protects deploy/: %s", a.Summary())
	}
}

// TestRealDeletes: commands that delete trees are judged by what they
// really delete (issue 14 item 4).
func TestRealDeletes(t *testing.T) {
	t.Parallel()
	rd := "recursive-delete"
	runCases(t, []ruleCase{
		{"find . -type f -exec rm -f {} +", ask, rd},
		{"find . -type f -exec rm {} \\;", ask, rd},
		{"find src -name '*.go' -execdir rm -- {} +", ask, rd},
		{"find . -ok rm {} \\;", ask, rd},
		{"find . -exec unlink {} \\;", ask, rd},
		{"find . -type f -exec truncate -s 0 {} +", ask, rd},
		{"find src -delete", ask, rd},
		{"find / -exec rm -f {} +", deny, "disk-destroy"},
		{"find ~ -type f -exec rm -f {} +", deny, ""},
		{"find . -exec sh -c 'rm \"$1\"' _ {} \\;", ask, ""},
		{"tar --remove-files -cf a.tar src", ask, rd},
		{"tar -czf a.tgz --remove-files .", ask, rd},
		{"tar cf a.tar --remove-files src", ask, rd},
		{"git rm -r src", ask, rd},
		{"git rm -rqf .", ask, rd},
		{"git rm -r -f -- .", ask, rd},
		{"git rm '*.go'", ask, rd},
		{"git rm -f ':/*'", ask, rd},
		{"git rm --pathspec-from-file=list", ask, rd},
		{"git clean -f", ask, "git-clean"},
		{"git clean -fd", ask, "git-clean"},
		{"git clean -fdx", ask, "git-clean"},
		{"git clean -d", ask, "git-clean"}, // clean.requireForce may be off
		{"git -c clean.requireForce=false clean -dx", ask, "git-clean"},
		{"rsync -a --delete src/ dst/", ask, rd},
		{"rsync -a --delete-delay src/ dst/", ask, rd},
		{"rsync -a --remove-source-files src/ dst/", ask, rd},
		{"ls | xargs rm", ask, rd},
		{"find . -name '*.o' | xargs rm -f", ask, rd},
		{"xargs -I{} rm -rf {} < list", ask, rd},
		{"find . -print0 | xargs -0 unlink", ask, rd},
		{"sh -c 'rm -rf src'", ask, rd},
		{"bash -c 'cd src && rm -r *'", ask, rd},
		{"shred -u a.txt", ask, "secure-delete"},
		{"fd -t f -x rm", ask, rd},
		{"fd . src -X rm -f", ask, rd},
		{"fd -e go --exec rm {} ;", ask, rd},
		{"fd . / -x rm -f {}", deny, "disk-destroy"},
		{"git checkout .", ask, "git-discard"},
		{"git restore .", ask, "git-discard"},
		{"git reset --hard", ask, "git-reset-hard"},
		// legitimate
		{"find . -name '*.go'", allow, ""},
		{"find . -name x -print", allow, ""},
		{"find . -type f -exec grep -l TODO {} +", allow, ""},
		{"find . -name '*.go' -exec gofmt -l {} +", allow, ""},
		{"fd -e go && fd -e go -x gofmt -l {}", allow, ""},
		{"go test ./...", allow, ""},
		{"git rm file.txt", allow, ""},
		{"git rm -r --cached .", allow, ""},
		{"git rm -n -r src", allow, ""},
		{"git clean -n -d", allow, ""},
		{"git clean --dry-run", allow, ""},
		{"tar -czf a.tgz src", allow, ""},
		{"rsync -a src/ dst/", allow, ""},
		{"rm a.o && unlink b.o", allow, ""},
		{"git stash -u && git stash pop", allow, ""},
	})
}

// TestNetToolClass: browsers, text browsers, HTTP clients and network
// attack tools are network tools (issue 14 item 11).
func TestNetToolClass(t *testing.T) {
	t.Parallel()
	var cases []ruleCase
	for _, n := range []string{"lynx -dump https://x", "links https://x", "elinks https://x", "w3m https://x",
		"http-prompt https://x", "http POST x a=b", "https x", "httpie x", "xh x", "aria2c x", "chromium --headless --dump-dom x",
		"google-chrome --headless x", "firefox --headless x", "/usr/bin/chromium-browser x", "hydra -l a -P p ssh://h",
		"medusa -h h -u a -P p -M ssh", "ncrack h", "nmap -p- h", "masscan h", "socat - TCP:h:80", "telnet h", "ftp h",
		"tftp h", "smbclient //h/s", "xdg-open https://x", "yt-dlp x", "sqlmap -u x", "redis-cli -h h", "impacket-smbclient h",
		"env lynx x", "sh -c 'w3m x'", "timeout 3 links x"} {
		cases = append(cases, ruleCase{n, deny, "net-tool"})
	}
	cases = append(cases, ruleCase{"echo lynx links w3m && ls ./links", allow, ""})
	runCases(t, cases)
}

// TestProtectHeadsSound: the pre-filter never hides a path Match would
// protect.
func TestProtectHeadsSound(t *testing.T) {
	t.Parallel()
	l := protect.Default().With(protect.Rule{Pattern: "deploy/run.sh", Why: "x"})
	h := newProtectHeads(l)
	var rels []string
	for _, r := range l.Rules() {
		p := strings.TrimSuffix(r.Pattern, "/")
		rels = append(rels, p, strings.ToUpper(p), "a/"+p, "a/b/"+p+"/c", p+"/x/y", "x"+p, p+"x")
	}
	rels = append(rels, "src/main.go", "README.md", `x\.git\config`)
	for _, rel := range rels {
		if _, ok := l.Match(rel); ok && !h.may(rel) {
			t.Errorf("%q is protected but the pre-filter skips it", rel)
		}
	}
	if h.may("src/main.go") {
		t.Error("the pre-filter lets everything through")
	}
}
