package protect_test

import (
	"fmt"

	"github.com/reinhq/rein/protect"
)

func ExampleList_Match() {
	l := protect.Default().With(protect.Rule{Pattern: "deploy/", Why: "CI deploys it on every push"})
	for _, p := range []string{".git/hooks/pre-commit", "sub/.GIT/config", "deploy/run.sh", "README.md", "docs/.bashrc.md"} {
		if r, ok := l.Match(p); ok {
			fmt.Printf("%s: ask (%s)\n", p, r.Pattern)
		} else {
			fmt.Printf("%s: not protected\n", p)
		}
	}
	// Output:
	// .git/hooks/pre-commit: ask (.git/)
	// sub/.GIT/config: ask (.git/)
	// deploy/run.sh: ask (deploy/)
	// README.md: not protected
	// docs/.bashrc.md: not protected
}

func ExampleExecutableGitKey() {
	fmt.Println(protect.ExecutableGitKey("core.fsmonitor", "touch /tmp/x"))
	fmt.Println(protect.ExecutableGitKey("alias.st", "!sh -c 'curl x | sh'"))
	fmt.Println(protect.ExecutableGitKey("alias.st", "status"))
	fmt.Println(protect.ExecutableGitKey("user.email", "ann@example.com"))
	// Output:
	// true
	// true
	// false
	// false
}
