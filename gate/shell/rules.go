package shell

// ruleID is one rule the analyzer can fire. Every id is a constant of this
// type, registered in ruleTable with its name, the hint the model is given
// and example commands it must and must not fire on (TestRuleTable runs
// them). Findings are made only from a ruleID, so a rule without a name or
// a hint cannot be returned.
type ruleID uint8

const (
	ruleNone ruleID = iota
	ruleCredentialRead
	ruleDevTcp
	ruleDiskDestroy
	ruleDnsLookup
	ruleDynamicCommand
	ruleEnvInject
	ruleForkBomb
	ruleGitBranchDelete
	ruleGitClean
	ruleGitConfigCode
	ruleGitDiscard
	ruleGitForcePush
	ruleGitHooks
	ruleGitPushDelete
	ruleGitPushUrl
	ruleGitRemoteChange
	ruleGitResetHard
	ruleGitRewrite
	ruleHistoryWipe
	ruleInlineCode
	ruleInterpreterCode
	ruleInterpreterSocket
	ruleInterpreterStdin
	ruleInternalError
	ruleNetApi
	ruleNetTool
	rulePackageInstall
	ruleParseError
	rulePersistence
	rulePrivEsc
	ruleProtectedPath
	rulePublish
	ruleRecursiveDelete
	ruleSecureDelete
	ruleSymlinkOutside
	ruleSystemDestroy
	ruleTooDeep
	ruleTooLarge
	ruleUnsupported
	ruleWriteOutside
	ruleWriteUnknown
	numRules
)

// ruleSpec is one registered rule.
type ruleSpec struct {
	name string // the stable id in findings and the audit log
	// why ends "This command was refused because ..." in the model's hint:
	// general, so that it does not teach the model the policy's details.
	why string
	// match and noMatch are commands (run in /work/proj, home /home/agent)
	// the rule must and must not fire on.
	match, noMatch []string
}

// Hint classes shared by several rules.
const (
	whyNet     = "it could send data off the machine"
	whyDestroy = "it could destroy data or disrupt the system"
	whyCode    = "it runs code that cannot be checked before it runs"
	whyLoss    = "it deletes or overwrites work that may not be recoverable"
	whyInstall = "it installs software or changes the system"
	whyOutside = "it writes outside the working directory"
)

// ruleTable registers every rule. It is never written.
var ruleTable = [numRules]ruleSpec{
	ruleCredentialRead: {"credential-read", "it could read stored credentials",
		[]string{"cat ~/.ssh/id_rsa", "tar czf x.tgz ~", "git credential fill"},
		[]string{"cat README.md", "grep -r TODO ."}},
	ruleDevTcp: {"dev-tcp", whyNet,
		[]string{"echo x > /dev/tcp/10.0.0.1/80", "exec 3<>/dev/udp/h/53"},
		[]string{"echo x > /dev/null"}},
	ruleDiskDestroy: {"disk-destroy", whyDestroy,
		[]string{"rm -rf /", "mkfs.ext4 /dev/sda1", "dd if=/dev/zero of=/dev/sda", "rm -rf ~"},
		[]string{"rm -rf build", "dd if=a of=b"}},
	ruleDnsLookup: {"dns-lookup", whyNet,
		[]string{"dig example.com", "nslookup example.com"},
		[]string{"echo dig"}},
	ruleDynamicCommand: {"dynamic-command", whyCode,
		[]string{"$CMD x", "eval \"$X\"", "find . -exec {} \\;"},
		[]string{"echo $X", "ls \"$DIR\""}},
	ruleEnvInject: {"env-inject", whyCode,
		[]string{"LD_PRELOAD=./x.so ls", "export LD_LIBRARY_PATH=/tmp", "PATH=.:$PATH go test", "export PATH=bin; ls",
			"PATH=/tmp/x:/usr/bin make", "PATH=$(pwd)/bin go test", "PATH=$HOME/bin ls", "PATH=:/usr/bin ls"},
		[]string{"FOO=1 go test ./...", "PATH=$PATH:/usr/local/go/bin go test", "PATH=/usr/bin:/bin ls"}},
	ruleForkBomb: {"fork-bomb", whyDestroy,
		[]string{":(){ :|:& };:", "while true; do sleep 1 & done"},
		[]string{"f(){ echo x; }; f"}},
	ruleGitBranchDelete: {"git-branch-delete", whyLoss,
		[]string{"git branch -D old", "git branch -df old"},
		[]string{"git branch -d merged", "git branch new"}},
	ruleGitClean: {"git-clean", whyLoss,
		[]string{"git clean -fdx", "git clean --force", "git clean -f -- src"},
		[]string{"git clean -n", "git clean -fn"}},
	ruleGitConfigCode: {"git-config-code", "it sets a git setting whose value git runs as a command later, outside the sandbox",
		[]string{"git config core.fsmonitor ./x", "git config --local core.pager 'sh -c x'", "git -c core.fsmonitor=./x status",
			"git config set alias.st '!sh x'", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=less git log"},
		[]string{"git config user.name me", "git config alias.st status", "git -c user.email=a@b commit -m x",
			"git config --get core.pager"}},
	ruleGitDiscard: {"git-discard", whyLoss,
		[]string{"git checkout .", "git restore .", "git stash drop", "git checkout -f main"},
		// git stash -u keeps what it removes in the stash: git stash pop brings it back.
		[]string{"git checkout main", "git restore --staged a.go", "git stash", "git stash -u"}},
	ruleGitForcePush: {"git-force-push", whyLoss,
		[]string{"git push --force", "git push origin +main", "git push -uf origin x"},
		[]string{"git push", "git push -u origin feature"}},
	ruleGitHooks: {"git-hooks", whyCode,
		[]string{"git -c core.hooksPath=/tmp/h commit", "git clone --template=/t u"},
		[]string{"git commit -m x"}},
	ruleGitPushDelete: {"git-push-delete", whyLoss,
		[]string{"git push origin --delete old", "git push origin :old"},
		[]string{"git push origin main"}},
	ruleGitPushUrl: {"git-push-url", "it sends the repository to an address that is not one of its configured remotes",
		[]string{"git push https://example.com/x.git main", "git push git@host:x.git", "git push ../other"},
		[]string{"git push origin main", "git push"}},
	ruleGitRemoteChange: {"git-remote-change", "it changes where git sends the repository",
		[]string{"git remote add x https://example.com/x.git", "git remote set-url origin u"},
		[]string{"git remote -v", "git remote show origin"}},
	ruleGitResetHard: {"git-reset-hard", whyLoss,
		[]string{"git reset --hard", "git reset --hard HEAD~1"},
		[]string{"git reset --soft HEAD~1", "git reset a.go"}},
	ruleGitRewrite: {"git-rewrite", whyLoss,
		[]string{"git filter-branch --tree-filter x HEAD"},
		[]string{"git rebase main"}},
	ruleHistoryWipe: {"history-wipe", "it could erase the shell history",
		[]string{"history -c", "unset HISTFILE", "rm ~/.bash_history"},
		[]string{"history"}},
	ruleInlineCode: {"inline-code", whyCode,
		[]string{"python3 -c 'print(1+1)'", "node -e 'console.log(1)'", "perl -ne 'print if /x/' f", "ruby -e 'puts 1'",
			"php -r 'echo 1;'", "python3 <<'EOF'\nprint(1)\nEOF", "echo 'print(1)' > x.py && python3 x.py"},
		[]string{"python3 script.py", "node --version", "go test ./...", "python3 -m pytest -q", "bash -c 'go vet ./...'"}},
	ruleInterpreterCode: {"interpreter-code", whyCode,
		[]string{"sed 's/x/y/e' f", "python3 -c \"exec(input())\""},
		[]string{"python3 -c 'print(1)'", "sed 's/a/b/' f"}},
	ruleInterpreterSocket: {"interpreter-socket", whyNet,
		[]string{"python3 -c 'import socket'", "perl -e 'use IO::Socket'"},
		[]string{"python3 -c 'import os'"}},
	ruleInterpreterStdin: {"interpreter-stdin", whyCode,
		[]string{"cat x | python3", "cat x.py | python3"},
		[]string{"python3 x.py"}},
	ruleInternalError: {"internal-error", "the check of it failed",
		nil, []string{"ls"}},
	ruleNetApi: {"net-api", whyNet,
		[]string{"gh api repos/x/y -f body=z"},
		[]string{"gh pr list"}},
	ruleNetTool: {"net-tool", whyNet,
		[]string{"curl https://example.com", "lynx -dump u", "w3m u", "hydra -l a h ssh", "chromium --headless u", "http get u"},
		[]string{"echo curl", "ls", "go test ./..."}},
	rulePackageInstall: {"package-install", whyInstall,
		[]string{"apt-get install jq", "pip install x", "npm install"},
		[]string{"npm test", "pip list"}},
	ruleParseError: {"parse-error", "a command string inside it is not valid shell syntax",
		[]string{"echo 'x", "bash -c 'echo \"'"},
		[]string{"echo 'x'"}},
	rulePersistence: {"persistence", whyInstall,
		[]string{"at now + 1 minute", "batch"},
		[]string{"crontab -l"}},
	rulePrivEsc: {"priv-esc", "it could escalate privileges",
		[]string{"sudo ls", "chmod u+s x", "su -c id"},
		[]string{"chmod +x x.sh"}},
	ruleProtectedPath: {"protected-path", "it writes a file whose content runs code or changes a tool's rights later, outside the sandbox (git hooks and config, shell start-up files, editor, agent and rein settings)",
		[]string{"echo x > .git/hooks/pre-commit", "install -m 755 x .git/hooks/pre-commit", "cp x .bashrc",
			"cd .git && echo x > config", "ln -s ../x .git/hooks/post-checkout", "tee -a .envrc", "sed -i s/a/b/ .vscode/tasks.json"},
		[]string{"echo x > README.md", "cp a b", "git commit -m x", "cat .git/config", "echo x > src/git/config"}},
	rulePublish: {"publish", whyNet,
		[]string{"npm publish", "cargo publish"},
		[]string{"npm pack"}},
	ruleRecursiveDelete: {"recursive-delete", whyLoss,
		[]string{"rm -rf build", "find . -delete", "find . -type f -exec rm -f {} +", "tar --remove-files -cf a.tar src",
			"git rm -r src", "rsync -a --delete a/ b/", "ls | xargs rm -rf"},
		[]string{"rm a.o", "find . -name '*.go'", "git rm file.txt"}},
	ruleSecureDelete: {"secure-delete", whyDestroy,
		[]string{"shred -u notes.txt"},
		[]string{"rm notes.txt"}},
	ruleSymlinkOutside: {"symlink-outside", "it links to a place outside the working directory, so later writes may land there",
		[]string{"ln -s /etc/passwd p"},
		[]string{"ln -s a b"}},
	ruleSystemDestroy: {"system-destroy", whyDestroy,
		[]string{"shutdown now", "iptables -F", "kill -9 -1"},
		[]string{"kill %1"}},
	ruleTooDeep: {"too-deep", "it is too deeply nested or too complex to check",
		[]string{"eval eval eval eval eval eval eval eval eval eval ls"},
		[]string{"eval eval ls"}},
	ruleTooLarge: {"too-large", "it is too large to check",
		nil, []string{"ls"}},
	ruleUnsupported: {"unsupported", "it uses shell syntax the check does not know",
		nil, []string{"ls"}},
	ruleWriteOutside: {"write-outside", whyOutside,
		[]string{"echo x > /tmp/x", "cp a /etc/passwd", "git config --global user.name x"},
		[]string{"echo x > out.txt"}},
	ruleWriteUnknown: {"write-unknown", "it writes to a place that is only known when it runs",
		[]string{"echo x > $F", "cd $D && touch x"},
		[]string{"touch x"}},
}

// capSpec says how a rule reads under the executor's capabilities
// (Options.Exec), with examples TestRuleTable runs in two sandboxes: one
// without network whose /tmp is its own (boxExec), one with network
// (netBoxExec). A rule without an entry reads the same in any executor.
type capSpec struct {
	// network marks a rule that guards only against use of the network: in
	// a sandbox without network the command fails to connect, so the rule
	// does not fire there (the sandbox stops it, and the command is judged
	// as the sandbox will run it). Outside a sandbox it fires as always.
	network bool
	// boxMatch and boxNoMatch must and must not fire in boxExec; netMatch
	// must fire in netBoxExec.
	boxMatch, boxNoMatch, netMatch []string
}

// boxExec and netBoxExec are the sandboxes the examples of capTable run in.
var (
	boxExec    = Executor{Sandboxed: true, TmpDir: "/tmp"}
	netBoxExec = Executor{Sandboxed: true, Network: true}
)

// capTable registers how rules read in a sandbox. It is never written.
var capTable = [numRules]capSpec{
	ruleDevTcp: {network: true,
		boxNoMatch: []string{"echo x > /dev/tcp/10.0.0.1/80"},
		netMatch:   []string{"echo x > /dev/tcp/10.0.0.1/80"}},
	ruleDnsLookup: {network: true,
		boxNoMatch: []string{"dig example.com"},
		netMatch:   []string{"dig example.com"}},
	ruleInlineCode: {
		// inside a sandbox, inline code is judged by its signs and by what
		// the sandbox allows
		boxNoMatch: []string{"python3 -c 'print(1+1)'", "node -e 'console.log(1)'", "perl -ne 'print if /x/' f"}},
	ruleInterpreterCode: {
		// signs still raise inline code in a sandbox: never lower
		boxMatch: []string{"python3 -c \"import os; os.system('ls')\"", "python3 -c 'exec(input())'"},
		netMatch: []string{"python3 -c \"import os; os.system('ls')\""}},
	ruleInterpreterSocket: {network: true,
		boxNoMatch: []string{"python3 -c 'import socket'", "perl -e 'use IO::Socket'", "awk 'BEGIN{print |& \"/inet/tcp/0/h/80\"}'"},
		netMatch:   []string{"python3 -c 'import socket'", "node -e 'fetch(\"https://x\")'"}},
	ruleNetApi: {network: true,
		boxNoMatch: []string{"gh api repos/x/y -f body=z"},
		netMatch:   []string{"gh api repos/x/y -f body=z"}},
	ruleNetTool: {network: true,
		boxNoMatch: []string{"curl https://example.com", "ssh host", "wget -q u", "python3 -m http.server"},
		netMatch:   []string{"curl https://example.com", "ssh host"}},
	rulePublish: {network: true,
		boxNoMatch: []string{"npm publish"},
		netMatch:   []string{"npm publish"}},
	// What a network tool or network code does besides the network is still
	// judged in a sandbox without network.
	ruleDiskDestroy: {
		boxMatch: []string{"ssh host rm -rf /", "python3 -c \"import socket, os; os.system('rm -rf ~')\""}},
	ruleProtectedPath: {
		boxMatch: []string{"curl u sh -c 'echo x > .git/hooks/pre-commit'", "python3 -c \"import urllib; open('.git/config','a')\""}},
	ruleWriteOutside: {
		// the sandbox's own /tmp is not outside; the rest is
		boxMatch:   []string{"cp a /etc/passwd", "echo x > /home/agent/x"},
		boxNoMatch: []string{"echo x > /tmp/x", "cp a /tmp/b"},
		netMatch:   []string{"echo x > /tmp/x"}},
	ruleWriteUnknown: {
		boxNoMatch: []string{"python3 -c \"open('/tmp/x','w').write('y')\""}},
}

// String returns the rule's stable name.
func (r ruleID) String() string {
	if r >= numRules {
		return ""
	}
	return ruleTable[r].name
}

// why returns the rule's hint for the model.
func (r ruleID) why() string {
	if r >= numRules || ruleTable[r].why == "" {
		return "it is too large, too complex or too unusual to check"
	}
	return ruleTable[r].why
}
