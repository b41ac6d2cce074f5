package docker

import "testing"

// TestDockerOOMReported is issue 14.7 for the docker backend: a command
// that reaches the container's memory limit is reported as killed for it,
// and the executor goes on; a command killed otherwise is not.
func TestDockerOOMReported(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{Memory: "64m"})
	res := run(t, e, work, "dd if=/dev/zero of=/dev/null bs=200M count=1")
	if !res.OOMKilled || res.MemoryLimit != 64<<20 || res.Signal != "killed" {
		t.Errorf("a 200 MiB buffer under a 64 MiB limit: OOMKilled %v, MemoryLimit %d, Signal %q, exit %d; want an OOM kill at 64 MiB",
			res.OOMKilled, res.MemoryLimit, res.Signal, res.ExitCode)
	}
	for _, script := range []string{"dd if=/dev/zero of=/dev/null bs=1M count=4", "kill -s KILL $$", "sh -c 'kill -s KILL $$'"} {
		if res := run(t, e, work, script); res.OOMKilled {
			t.Errorf("%s: reported as an OOM kill: %+v", script, res)
		}
	}
	if res := run(t, e, work, "echo alive"); res.Stdout != "alive\n" {
		t.Errorf("after the OOM kill: %+v", res)
	}
}
