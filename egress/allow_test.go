package egress

import (
	"errors"
	"testing"
)

func TestParseRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Rule
		bad  bool
	}{
		{in: "example.org", want: Rule{Host: "example.org"}},
		{in: "Example.ORG.", want: Rule{Host: "example.org"}},
		{in: "example.org:8443", want: Rule{Host: "example.org", Port: 8443}},
		{in: "*.example.net", want: Rule{Host: "example.net", Wildcard: true}},
		{in: "*.example.net:443", want: Rule{Host: "example.net", Wildcard: true, Port: 443}},
		{in: "198.51.100.7:8080", want: Rule{Host: "198.51.100.7", Port: 8080}},
		{in: "[2001:db8::1]", want: Rule{Host: "2001:db8::1"}},
		{in: "[2001:db8::1]:443", want: Rule{Host: "2001:db8::1", Port: 443}},
		{in: "bücher.example", want: Rule{Host: "xn--bcher-kva.example"}},
		{in: "", bad: true},
		{in: "*", bad: true},
		{in: "*.net", bad: true},
		{in: "*.*.example.net", bad: true},
		{in: "ex*ample.org", bad: true},
		{in: "example.org:0", bad: true},
		{in: "example.org:65536", bad: true},
		{in: "example.org:+80", bad: true},
		{in: "http://example.org", bad: true},
		{in: "user@example.org", bad: true},
		{in: "example.org/path", bad: true},
		{in: "*.198.51.100.7", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseRule(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseRule(%q) = %+v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules([]string{"example.org", "*.example.net:443", "pkg.example.com:8443"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		port int
		want error // nil, errNotListed or errPort
	}{
		{"example.org", 443, nil},
		{"example.org", 80, nil},
		{"example.org", 22, errPort},
		{"example.org", 8443, errPort},
		{"www.example.org", 443, errNotListed}, // no wildcard: the name alone
		{"a.example.net", 443, nil},
		{"a.b.example.net", 443, nil},
		{"a.example.net", 80, errPort},
		{"example.net", 443, errNotListed}, // a wildcard is below the domain only
		{"badexample.net", 443, errNotListed},
		{"example.net.evil.test", 443, errNotListed},
		{"pkg.example.com", 8443, nil},
		{"pkg.example.com", 443, errPort},
		{"evil.test", 443, errNotListed},
	}
	for _, tt := range tests {
		err := allowed(rules, tt.host, tt.port)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("allowed(%s:%d) = %v, want %v", tt.host, tt.port, err, tt.want)
		}
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"example.org", "*.example.net:443", "[::1]:80", "1.2.3.4", "*.", ":", "[", "*.a.b:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		// What parses writes back to an entry that parses the same.
		again, err := ParseRule(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseRule(%q) = %+v, and its String %q gives %+v, %v", s, r, r.String(), again, err)
		}
		if r.Host == "" {
			t.Fatalf("ParseRule(%q): empty host", s)
		}
	})
}
