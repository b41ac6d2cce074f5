package docker

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// TestContainerSeesChildEnv: a command in the container whose caller set
// no environment sees exactly sandbox.ChildEnv as Inside places it (plus
// HOSTNAME, which the runtime adds): nothing of rein's environment, a
// secret planted there included.
func TestContainerSeesChildEnv(t *testing.T) { // not parallel: t.Setenv
	t.Setenv("OPENAI_API_KEY", "sk-planted")
	t.Setenv("REIN_PLANTED_SECRET", "planted")
	e, work := start(t, Options{})
	res, err := e.Exec(t.Context(), sandbox.Cmd{Script: "exec env", Dir: work, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PWD", "SHLVL", "_", "OLDPWD", "HOSTNAME":
		default:
			got = append(got, kv)
		}
	}
	slices.Sort(got)
	want := sandbox.ChildEnv(nil, Inside())
	if !slices.Equal(got, want) || !slices.Equal(DefaultEnv(), want) {
		t.Fatalf("the command saw\n %q\nwant\n %q", got, want)
	}
}
