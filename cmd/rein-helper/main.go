// Command rein-helper is rein's sandbox helper alone: what rein re-executes
// to confine a command (the landlock helper, its zygote and stager, the
// local executor's reaper), built without the rest of rein. It links only
// package sandbox, so each start skips the package initialisation of the
// model SDKs, the JSON Schema library and the terminal interface that a
// start of the rein binary pays.
//
// rein uses it when it lies beside the rein binary and was built from the
// same sources (cmd/rein/helper.go); otherwise rein re-executes itself,
// which does the same. Install both:
//
//	go install ./cmd/rein ./cmd/rein-helper
//
// It is not meant to be run by hand: it takes the helper's arguments only.
package main

import (
	"fmt"
	"os"

	"github.com/reinhq/rein/sandbox"
)

func main() {
	if !sandbox.IsHelper() {
		fmt.Fprintln(os.Stderr, "rein-helper: rein's sandbox helper; rein starts it, it is not run by hand")
		os.Exit(2)
	}
	os.Exit(sandbox.HelperMain(os.Args[2:]))
}
