package shell

import "testing"

// TestUnmodelledWriters is issue 14, H2: programs whose writes the analyzer
// does not derive, given a protected path, ask (and so are refused in
// bypass). 45 of these 52 were allowed before the class rule.
func TestUnmodelledWriters(t *testing.T) {
	t.Parallel()
	const p = "protected-path"
	runCases(t, []ruleCase{
		// Decompressors write the operand without its suffix.
		{"gunzip x/.envrc.gz", ask, p},
		{"gzip -d .bashrc.gz", ask, p},
		{"gzip --decompress .zshrc.gz", ask, p},
		{"gzip -df .profile.gz", ask, p},
		{"unxz .envrc.xz", ask, p},
		{"xz -d .git/hooks/pre-commit.xz", ask, p},
		{"zstd -d .envrc.zst", ask, p},
		{"unzstd .vscode/tasks.json.zst", ask, p},
		{"bunzip2 .envrc.bz2", ask, p},
		{"bzip2 -d .bashrc.bz2", ask, p},
		{"lz4 -d .envrc.lz4", ask, p},
		{"unlzma .envrc.lzma", ask, p},
		{"brotli -d .mcp.json.br", ask, p},
		{"uncompress .envrc.Z", ask, p},
		{"pigz -d .git/config.gz", ask, p},
		// A compressor removes what it compresses.
		{"gzip .bashrc", ask, p},
		// Output options and operands.
		{"shuf -o .envrc x", ask, p},
		{"shuf --output=.envrc x", ask, p},
		{"uniq x .envrc", ask, p},
		{"xxd -r x .git/config", ask, p},
		{"iconv -f utf8 -t utf8 -o .envrc x", ask, p},
		{"iconv --output=.git/hooks/post-checkout x", ask, p},
		{"base32 -d x > y; mytool --out=.vscode/tasks.json", ask, p},
		{"mytool -o.envrc", ask, p},
		{"convert in.png .idea/workspace.xml", ask, p},
		{"cmake -E copy x .git/hooks/pre-push", ask, p},
		{"python3 gen.py .git/hooks/pre-commit", ask, p},
		{"node build.js --dest=.claude/settings.json", ask, p},
		{"./script.sh .envrc", ask, p},
		{"yq -i .a=1 .vscode/settings.json", ask, p},
		{"jq . x | sponge .mcp.json", ask, p},
		{"awk -i inplace 1 .bashrc", ask, p},
		{"perl -pi -e s/a/b/ .git/config", ask, p},
		{"ruby -i -pe 1 .envrc", ask, p},
		// Scripted editors.
		{"vim -c wq .git/config", ask, p},
		{"vi -es -c 'normal Ax' -c wq .envrc", ask, p},
		{"nvim --headless +wq .bashrc", ask, p},
		{"ex -sc wq .git/config", ask, p},
		{"ed -s .envrc < script", ask, p},
		{"emacs --batch .envrc -f save-buffer", ask, p},
		// Per-item runners.
		{"parallel cp x ::: .git/hooks/pre-commit", ask, p},
		{"parallel cp x {} ::: .envrc .bashrc", ask, p},
		{"find . -name config -exec sed -i s/a/b/ {} +", ask, p},
		{"find . -type f -exec chmod +x {} +", ask, p},
		{"fd config -x sed -i s/a/b/", ask, p},
		{"find . -name '*.json' -exec prettier --write {} +", ask, p},
		// git commands that rewrite the files they name.
		{"git checkout HEAD -- .envrc", ask, p},
		{"git restore --source=HEAD~3 .vscode/tasks.json", ask, p},
		// Globs that may match a protected name.
		{"unzstd .env*.zst", ask, p},
		{"mytool --out .vs*/tasks.json", ask, p},
		// Case and dots folded as protect.Match folds them.
		{"shuf -o .ENVRC x", ask, p},
		{"uniq x ./sub/../.bashrc", ask, p},
	})
}

// TestReadersAndOrdinaryWrites: what only reads a protected path, and
// what writes an ordinary one, is judged as before.
func TestReadersAndOrdinaryWrites(t *testing.T) {
	t.Parallel()
	runCases(t, []ruleCase{
		{"cat .git/config", allow, ""},
		{"grep -n fsmonitor .git/config", allow, ""},
		{"diff .bashrc .bashrc.orig", allow, ""},
		{"git diff .vscode/settings.json", allow, ""},
		{"git add .vscode/settings.json", allow, ""},
		{"git log -p -- .envrc", allow, ""},
		{"sha256sum .git/hooks/pre-commit", allow, ""},
		{"zcat .envrc.gz", allow, ""},
		{"gzip -d data.gz", allow, ""},
		{"gunzip logs/app.log.gz", allow, ""},
		{"sort -o out.txt in.txt", allow, ""},
		{"shuf -o out.txt in.txt", allow, ""},
		{"uniq in.txt out.txt", allow, ""},
		{"xxd -r dump.hex bin", allow, ""},
		{"vim -c wq README.md", allow, ""},
		{"mytool --out=build/out.json", allow, ""},
		{"find . -name '*.go'", allow, ""},
		{"find . -name '*.go' -exec gofmt -l {} +", allow, ""},
		{"find . -name '*.go' -exec grep -n TODO {} +", allow, ""},
		{"parallel gzip ::: a.txt b.txt", allow, ""},
		{"parallel echo ::: .envrc", allow, ""},
		{"go test ./...", allow, ""},
		{"make test", allow, ""},
		{"python3 gen.py out/config.json", allow, ""},
	})
}
