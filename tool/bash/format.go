package bash

import (
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// format renders a result for the model: how the command ended, then its
// stdout and stderr, each only when not empty and with its full size when
// the middle was cut.
func format(res sandbox.Result, timeout time.Duration) string {
	var b strings.Builder
	switch {
	case res.OOMKilled:
		fmt.Fprintf(&b, "killed: out of memory (limit %s)\n", sizeText(res.MemoryLimit))
	case res.TimedOut:
		fmt.Fprintf(&b, "killed: timed out after %gs\n", timeout.Seconds())
	case res.Signal != "":
		fmt.Fprintf(&b, "killed by signal: %s\n", res.Signal)
	default:
		fmt.Fprintf(&b, "exit code: %d\n", res.ExitCode)
	}
	section(&b, "stdout", res.Stdout, res.StdoutBytes)
	section(&b, "stderr", res.Stderr, res.StderrBytes)
	if res.Stdout == "" && res.Stderr == "" {
		b.WriteString("(no output)\n")
	}
	return b.String()
}

func section(b *strings.Builder, name, text string, size int64) {
	if text == "" {
		return
	}
	b.WriteString(name)
	if size > int64(len(text)) {
		fmt.Fprintf(b, " (%d bytes, the middle cut out)", size)
	}
	b.WriteString(":\n")
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
}

// sizeText renders a byte count as the largest binary unit that divides it
// ("2 GiB", "64 MiB"), else in bytes.
func sizeText(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
