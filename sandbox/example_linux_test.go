//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/reinhq/rein/sandbox"
)

func ExampleLocal() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	var ex sandbox.Executor = &sandbox.Local{}
	res, err := ex.Exec(context.Background(), sandbox.Cmd{
		Script:  `echo "hello from $0"; echo "to stderr" >&2; exit 3`,
		Dir:     dir,
		Timeout: 10 * time.Second,
	})
	if err != nil { // not started, or aborted
		panic(err)
	}
	fmt.Printf("exit %d\nstdout %q\nstderr %q\n", res.ExitCode, res.Stdout, res.Stderr)
	// Output:
	// exit 3
	// stdout "hello from /bin/bash\n"
	// stderr "to stderr\n"
}

// A rein binary's main serves as the sandbox helper first:
//
//	func main() {
//		if sandbox.IsHelper() {
//			os.Exit(sandbox.HelperMain(os.Args[2:]))
//		}
//		...
//	}
func ExampleLandlock() {
	if _, err := sandbox.LandlockStatus(); err != nil {
		fmt.Println("no sandbox here:", err) // refuse, or let the user choose --sandbox none
		return
	}
	work, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(work)

	ex := &sandbox.Landlock{WorkDir: work}
	defer ex.Close()
	res, err := ex.Exec(context.Background(), sandbox.Cmd{
		Script: `echo made > here; cat /etc/shadow`,
		Dir:    work,
	})
	if err != nil { // not started (no sandbox, no helper), or aborted
		panic(err)
	}
	fmt.Printf("exit %d\nstderr %q\n", res.ExitCode, res.Stderr)
}
