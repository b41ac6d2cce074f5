package netguard

import (
	"errors"
	"testing"
)

// Domains is webfetch's allowlist: only the hosts on it, on the ports
// it names (80 and 443 for an entry without one), whatever form the URL
// writes the host in.
func TestDomains(t *testing.T) {
	t.Parallel()
	p := &Policy{Domains: []string{"docs.example.org", "*.example.net:443", "API.example.com:8443"}}
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://docs.example.org/x", true},
		{"http://docs.example.org/x", true},
		{"https://DOCS.Example.ORG./x", true},
		{"https://docs.example.org:8080/x", false},
		{"https://www.docs.example.org/x", false},
		{"https://a.example.net/", true},
		{"https://a.b.example.net/", true},
		{"http://a.example.net/", false}, // port 80, entry is :443
		{"https://example.net/", false},
		{"https://evil-example.net/", false},
		{"https://example.net.evil.test/", false},
		{"https://api.example.com:8443/", true},
		{"https://api.example.com/", false},
		{"https://evil.test/", false},
		{"https://93.184.216.34/", false},
	}
	for _, tt := range tests {
		err := Check(tt.url, p)
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBlocked)) {
			t.Errorf("Check(%s) = %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
	// No list: every public host, as before.
	if err := Check("https://evil.test/", &Policy{}); err != nil {
		t.Errorf("no domain list: %v", err)
	}
}
