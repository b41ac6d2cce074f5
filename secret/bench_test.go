package secret_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/secret"
)

// BenchmarkRedact measures the redactor on tool results with no secret in
// them (the common case) and with one, with five exported secrets.
func BenchmarkRedact(b *testing.B) {
	env := []string{"PATH=/bin", "HOME=/root"}
	for i := range 5 {
		env = append(env, fmt.Sprintf("SERVICE%d_API_KEY=zq7F3a9c1e-planted-%d-4b2dXyQw", i, i))
	}
	r := secret.NewRedactor(env)
	line := "func handle(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, \"hello %s\", r.URL.Path) } // 42\n"
	for _, size := range []int{4 << 10, 256 << 10} {
		text := strings.Repeat(line, size/len(line))
		b.Run(fmt.Sprintf("clean/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				r.Redact(text)
			}
		})
		dirty := text + "SERVICE3_API_KEY=zq7F3a9c1e-planted-3-4b2dXyQw\n"
		b.Run(fmt.Sprintf("secret/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(dirty)))
			for b.Loop() {
				r.Redact(dirty)
			}
		})
	}
}
