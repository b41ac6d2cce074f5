package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// helperEnv makes the test binary a rein that starts a sandbox and then
// waits to be killed; its value is the work dir.
const helperEnv = "REIN_DOCKER_CRASH_HELPER"

// crashHelper is a rein that starts a sandbox and is killed before it can
// close it; TestMain runs it when helperEnv is set.
func crashHelper(work string) {
	e, err := Start(context.Background(), Options{Image: testImage, WorkDir: work, Session: "crash"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("started", e.ID())
	time.Sleep(time.Hour) // until killed, without Close
	os.Exit(1)
}

// TestGC: after a crash the container is left running; GC removes it, and
// leaves the containers of live rein processes and those it cannot judge.
func TestGC(t *testing.T) {
	t.Parallel()
	needImage(t)
	live, work := start(t, Options{})

	// A rein that crashes.
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+work)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "started ") {
		helper.Process.Kill()
		helper.Wait()
		t.Fatalf("helper: %q, %v", line, err)
	}
	orphan := strings.TrimSpace(strings.TrimPrefix(line, "started "))
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", orphan).Run() })
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	if !running(t, orphan) {
		t.Fatalf("the crashed rein's container %s is not running; nothing to collect", orphan)
	}

	// A container with rein's label but no owner labels: not GC's to judge.
	b, err := exec.Command("docker", "run", "--detach", "--rm", "--pull=never", "--network=none",
		"--label="+LabelSession+"=foreign", "--entrypoint=sleep", testImage, "300").Output()
	if err != nil {
		t.Fatal(err)
	}
	foreign := strings.TrimSpace(string(b))
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", foreign).Run() })

	removed, err := GC(t.Context(), "")
	if err != nil {
		t.Fatalf("GC: %v", err)
	}
	if !slices.Contains(removed, orphan) {
		t.Errorf("GC removed %v, not the crashed rein's container %s", removed, orphan)
	}
	for _, id := range []string{live.ID(), foreign} {
		if slices.Contains(removed, id) || !running(t, id) {
			t.Errorf("GC removed %s, whose owner is alive or unknown", id)
		}
	}
	if running(t, orphan) {
		t.Errorf("the crashed rein's container %s still runs after GC", orphan)
	}
	if res := run(t, live, work, "echo ok"); res.Stdout != "ok\n" {
		t.Errorf("the live sandbox broke: %+v", res)
	}
}

func running(t *testing.T, id string) bool {
	t.Helper()
	out, err := exec.Command("docker", "ps", "--quiet", "--no-trunc", "--filter", "id="+id).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)) != ""
}

func TestAvailable(t *testing.T) {
	t.Parallel()
	needImage(t)
	if err := Available(t.Context(), ""); err != nil {
		t.Errorf("Available(docker) = %v", err)
	}
	// "false version" fails as a client does whose daemon is down.
	for _, rt := range []string{"rein-no-such-runtime", "false"} {
		if err := Available(t.Context(), rt); !errors.Is(err, sandbox.ErrUnsupported) {
			t.Errorf("Available(%q) = %v, want ErrUnsupported", rt, err)
		}
	}
}

// BenchmarkDockerExec runs `true` through Exec: a docker client, the
// wrapper and its watcher.
func BenchmarkDockerExec(b *testing.B) {
	e, work := start(b, Options{})
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.Exec(b.Context(), sandbox.Cmd{Script: "true", Dir: work, Timeout: time.Minute})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}

// BenchmarkDockerExecBare runs `docker exec ID true` with nothing around
// it: what the wrapper costs on top.
func BenchmarkDockerExecBare(b *testing.B) {
	e, _ := start(b, Options{})
	b.ReportAllocs()
	for b.Loop() {
		if err := exec.Command(e.runtime, "exec", e.id, "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
