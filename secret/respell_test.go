package secret_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"

	"github.com/reinhq/rein/secret"
)

const planted = "zq7F3a9c1e-planted-4b2dXy"

func plantedRedactor() *secret.Redactor {
	return secret.NewRedactor([]string{"SERVICE_API_KEY=" + planted, "PATH=/bin"})
}

func rev(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// wrap cuts s into lines of n characters, as base64 and xxd -p print.
func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	return b.String() + s
}

// Every common re-spelling of a secret's value is redacted, inside other
// text and at any alignment; what is left holds no 8 characters of it in
// any of these spellings.
func TestRedactRespelled(t *testing.T) {
	t.Parallel()
	r := plantedRedactor()
	file := "# service\nSERVICE_URL=https://svc.example\nSERVICE_API_KEY=" + planted + "\nDEBUG=1\n"
	cases := map[string]string{
		"reversed line by line (rev)": func() string {
			var out []string
			for l := range strings.SplitSeq(file, "\n") {
				out = append(out, rev(l))
			}
			return strings.Join(out, "\n")
		}(),
		"base64 of the file, wrapped": wrap(base64.StdEncoding.EncodeToString([]byte(file)), 76),
		"base64 url, unwrapped":       base64.URLEncoding.EncodeToString([]byte("x" + file)),
		"base64, offset 2":            base64.RawStdEncoding.EncodeToString([]byte("ab" + planted + "!")),
		"hex of the file (xxd -p)":    wrap(hex.EncodeToString([]byte(file)), 60),
		"HEX upper":                   strings.ToUpper(hex.EncodeToString([]byte(planted))),
		"separators (sed s/./&_/g)":   strings.Join(strings.Split(planted, ""), "_") + "_",
		"one per line (fold -w1)":     strings.Join(strings.Split(planted, ""), "\n"),
		"spaced":                      "key: " + strings.Join(strings.Split(planted, ""), " ") + " end",
		"case changed":                strings.ToUpper(planted),
		"first half (cut)":            "part one: " + planted[:len(planted)/2] + ".",
		"second half (cut)":           "part two: " + planted[len(planted)/2:] + ".",
	}
	for name, text := range cases {
		got := r.Redact(text)
		if !strings.Contains(got, "[REDACTED:SERVICE_API_KEY]") {
			t.Errorf("%s: not redacted:\n%s", name, got)
		}
		if n, ok := r.Find(text); !ok || n != "SERVICE_API_KEY" {
			t.Errorf("%s: Find = %q, %v", name, n, ok)
		}
		if _, ok := r.Find(got); ok {
			t.Errorf("%s: the redacted text still holds the secret:\n%s", name, got)
		}
	}
}

// Text with no secret in it is left exactly as it was, however it is laid
// out; so is text near a secret's spelling but not it.
func TestRedactLeavesOrdinaryText(t *testing.T) {
	t.Parallel()
	r := plantedRedactor()
	for _, s := range []string{
		"",
		"package main\n\nfunc main() { println(\"hello\") }\n",
		strings.Repeat("a_b_c_d_e_f_g_h_", 100),
		base64.StdEncoding.EncodeToString([]byte(strings.Repeat("ordinary text ", 50))),
		hex.EncodeToString([]byte("zq7F3a9c")) + " is only the start",
		planted[:7] + " seven characters of it",
		"SERVICE_API_KEY is the name, not the value",
	} {
		if got := r.Redact(s); got != s {
			t.Errorf("Redact changed ordinary text:\n%q\nto\n%q", s, got)
		}
		if _, ok := r.Find(s); ok {
			t.Errorf("Find found a secret in %q", s)
		}
	}
}

// The commands of the issue, run for real where they exist, print the
// secret so that redaction still catches it.
func TestRedactCommandOutputs(t *testing.T) {
	t.Parallel()
	r := plantedRedactor()
	file := "SERVICE_API_KEY=" + planted + "\nOTHER=1\n"
	for _, c := range [][]string{{"rev"}, {"base64"}, {"xxd", "-p"}, {"sed", "s/./&_/g"}, {"od", "-An", "-tx1"}, {"fold", "-w1"}} {
		if _, err := exec.LookPath(c[0]); err != nil {
			t.Logf("%s not installed: skipped", c[0])
			continue
		}
		cmd := exec.CommandContext(t.Context(), c[0], c[1:]...)
		cmd.Stdin = strings.NewReader(file)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if bytes.Contains(out, []byte(planted)) {
			t.Fatalf("%v printed the value as it is", c)
		}
		if got := r.Redact(string(out)); !strings.Contains(got, "[REDACTED:SERVICE_API_KEY]") {
			t.Errorf("%v: not redacted:\n%s", c, got)
		}
	}
}

func FuzzRedactRespelled(f *testing.F) {
	f.Add("prefix", "suffix")
	f.Add("", "\n")
	r := plantedRedactor()
	f.Fuzz(func(t *testing.T, before, after string) {
		for _, enc := range []string{planted, rev(planted), hex.EncodeToString([]byte(planted)),
			base64.StdEncoding.EncodeToString([]byte(before + planted + after))} {
			if _, ok := r.Find(r.Redact(before + enc + after)); ok {
				t.Fatalf("still found after redaction: %q", before+enc+after)
			}
		}
	})
}
