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
