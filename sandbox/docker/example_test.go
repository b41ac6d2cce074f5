package docker_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/sandbox/docker"
)

// One container for a session: commands run in the work dir, as the user,
// without network; Close removes the container.
func Example() {
	ctx := context.Background()
	e, err := docker.Start(ctx, docker.Options{
		Image:   "rein-test-busybox:latest", // scripts/build-test-image; never pulled
		WorkDir: "/home/alice/project",
		Session: "0123abcd",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	var ex sandbox.Executor = e
	res, err := ex.Exec(ctx, sandbox.Cmd{
		Script:  "ls | wc -l",
		Dir:     "/home/alice/project",
		Timeout: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err) // not started, or aborted
	}
	fmt.Print(res.Stdout)
}

// After a crash, `rein sandbox gc` removes the containers whose rein
// process is gone.
func ExampleGC() {
	removed, err := docker.GC(context.Background(), "docker")
	if err != nil {
		log.Print(err)
	}
	fmt.Println(len(removed), "containers removed")
}
