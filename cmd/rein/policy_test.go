package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
)

// FuzzPolicyCheck feeds arbitrary input to rein policy check: it never
// panics, answers every input line with exactly one verdict, in order, and
// never allows what it could not read.
func FuzzPolicyCheck(f *testing.F) {
	for _, s := range []string{
		`{"tool":"calc","args":{"expression":"1+1"}}`,
		`{"tool":"send_email","args":{"to":"a@example.com","body":"hi"}}`,
		`{"tool":"read_file","args":{"path":"x","offset":-1}}`,
		"oops\n\n{\"tool\":\"calc\"}\r\n[1,2]",
		`{"tool":"calc","args":{"expression":"1"},"extra":1}`,
		`{"tool":"calc","args":"x"}`,
		"\x00\xff{",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, input string) {
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"policy", "check", "--workdir", dir, "--tools", "read_file,calc,send_email"},
			env{stdin: strings.NewReader(input), stdout: &out, stderr: &errOut})
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		lines := inputLines(input)
		sc := bufio.NewScanner(&out)
		n := 0
		for sc.Scan() {
			var v struct {
				Decision gate.Decision `json:"decision"`
				Gate     string        `json:"gate"`
				Reason   string        `json:"reason"`
			}
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("verdict %d is not JSON: %q", n+1, sc.Text())
			}
			if v.Gate == "" || v.Reason == "" {
				t.Fatalf("verdict %d without gate or reason: %q", n+1, sc.Text())
			}
			if n < len(lines) && v.Decision != gate.Deny && !json.Valid([]byte(lines[n])) {
				t.Fatalf("line %q is not JSON but got %s", lines[n], v.Decision)
			}
			n++
		}
		if n != len(lines) {
			t.Fatalf("%d verdicts for %d lines of %q", n, len(lines), input)
		}
	})
}

// inputLines splits input the way policy check reads it: by "\n", a final
// line without a newline counted when it is not empty, "\r\n" trimmed.
func inputLines(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	for i, p := range parts {
		parts[i] = strings.TrimRight(p, "\r\n")
	}
	return parts
}
