package netguard

import (
	"errors"
	"strings"
	"testing"
)

// refused lists URLs CheckURL must refuse with a zero policy, by the trick
// they try.
var refused = map[string][]string{
	"plain internal": {
		"http://127.0.0.1/", "http://127.0.0.1:8080/admin", "https://10.0.0.1/", "http://172.16.0.1/",
		"http://172.31.255.254/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/",
		"http://100.64.0.1/", "http://0.0.0.0/", "http://224.0.0.1/", "http://255.255.255.255/",
		"http://198.18.0.1/", "http://100.100.100.200/latest/meta-data/",
	},
	"decimal": {"http://2130706433/", "http://3232235777/", "http://2852039166/", "http://167772161/", "http://0/"},
	"octal":   {"http://0177.0.0.1/", "http://0177.0000.0000.0001/", "http://017700000001/", "http://00000177.0.0.1/", "http://0251.0376.0251.0376/"},
	"hex": {
		"http://0x7f000001/", "http://0x7f.0x0.0x0.0x1/", "http://0x7f.1/", "http://0X7F.1/", "http://0xa9fea9fe/",
		"http://0xA9.0xFE.0xA9.0xFE/", "http://0xc0a80101/",
	},
	"short": {"http://127.1/", "http://127.0.1/", "http://10.1/", "http://192.168.1/", "http://169.254.43518/"},
	"mixed": {"http://0x7f.0.1/", "http://0177.0x0.1/", "http://0x7f.0.0.1/", "http://127.0x0.0.01/"},
	"malformed numeric": {
		"http://127.0.0.1.1/", "http://256.0.0.1/", "http://08.0.0.1/", "http://0x7g.1/", "http://1.2.3.4.5/",
		"http://4294967296/", "http://example.123/", "http://1..1/",
	},
	"ipv6": {
		"http://[::1]/", "http://[::]/", "http://[0:0:0:0:0:0:0:1]/", "http://[::1]:8080/", "http://[fe80::1]/",
		"http://[fd00::1]/", "http://[fc00::]/", "http://[ff02::1]/", "http://[::ffff:127.0.0.1]/",
		"http://[::ffff:7f00:1]/", "http://[::ffff:169.254.169.254]/", "http://[0:0:0:0:0:ffff:127.0.0.1]/",
		"http://[::127.0.0.1]/", "http://[::7f00:1]/", "http://[64:ff9b::127.0.0.1]/", "http://[2002:7f00:1::]/",
		"http://[::ffff:a9fe:a9fe]/", "http://[FE80::1]/",
	},
	"zone": {"http://[fe80::1%25eth0]/", "http://[fe80::1%eth0]/", "http://[2606:4700::1%25eth0]/"},
	"trailing dot": {
		"http://127.0.0.1./", "http://localhost./", "http://metadata.google.internal./", "http://127.0.0.1../",
		"http://example.com../",
	},
	"local names": {
		"http://localhost/", "http://LOCALHOST/", "http://localhost:3000/", "http://foo.localhost/",
		"http://a.b.localhost/", "http://localhost.localdomain/", "http://printer.local/", "http://router.lan/",
		"http://intranet/", "http://wiki.corp/", "http://nas.home.arpa/", "http://1.0.0.127.in-addr.arpa/",
	},
	"metadata": {
		"http://metadata.google.internal/computeMetadata/v1/", "http://metadata/", "http://metadata.goog/",
		"http://instance-data/", "http://instance-data.ec2.internal/", "http://service.internal/",
	},
	"rebinding domains": {
		"http://127.0.0.1.nip.io/", "http://10-0-0-1.sslip.io/", "http://app.localtest.me/", "http://lvh.me/",
		"http://7f000001.c0a80001.rbndr.us/",
	},
	"userinfo": {
		"http://evil@127.0.0.1/", "http://user:pass@example.com/", "http://example.com@127.0.0.1/",
		"http://127.0.0.1@example.com/", "http://a@b@127.0.0.1/", "http://:@example.com/",
	},
	"percent-encoded host": {
		"http://%31%32%37.0.0.1/", "http://127.0.0.%31/", "http://%6c%6f%63%61%6c%68%6f%73%74/", "http://exa%2Emple.com/",
	},
	"unicode": {"http://１２７.０.０.１/", "http://ｌｏｃａｌｈｏｓｔ/", "http://127。0。0。1/", "http://⑯⑨。②⑤④。⑯⑨｡②⑤④/"},
	"schemes": {
		"file:///etc/passwd", "gopher://127.0.0.1:70/", "ftp://example.com/", "data:text/html,<b>x</b>",
		"javascript:alert(1)", "ws://example.com/", "wss://example.com/", "dict://127.0.0.1:11211/",
		"ldap://example.com/", "jar:http://example.com!/", "netdoc:///etc/passwd", "mailto:a@example.com",
	},
	"shape": {
		"", "example.com", "//example.com/", "http:example.com", "http:/example.com", "http:///path", "http://",
		"http://:80/", "http://example.com:0/", "http://example.com:65536/", "http://example.com:99999/",
		"http://exa mple.com/", " http://example.com/", "http://example.com/\n", "http://example.com\\@127.0.0.1/",
		"http:\\\\127.0.0.1\\", "http://example.com/\x00", "http://a..b.com/", "http://.example.com/",
		"http://exa$mple.com/", "http://exa!mple.com/", "http://[127.0.0.1]/", "http://[::1/",
	},
}

// allowed lists URLs a zero policy must let through.
var allowed = []string{
	"http://example.com/", "https://example.com/path?q=1#frag", "HTTPS://EXAMPLE.COM/", "https://example.com:8443/",
	"http://8.8.8.8/", "http://1.1.1.1:80/", "http://134744072/", "http://[2606:4700:4700::1111]/",
	"http://[::ffff:8.8.8.8]/", "https://münchen.de/", "https://xn--mnchen-3ya.de/", "http://example.com./",
	"https://sub.domain.example.co.uk/a/b", "http://my_host.example.com/", "https://example.com/a\u00e9",
	"http://example.com:/", "http://rebind.test/", "http://localhost.example.com/", "http://internal.example.com/",
	"http://1.2.3.4a/",
}

func TestCheckURLRefuses(t *testing.T) {
	t.Parallel()
	for trick, urls := range refused {
		for _, u := range urls {
			got, err := CheckURL(u, nil)
			if !errors.Is(err, ErrBlocked) {
				t.Errorf("%s: CheckURL(%q) = %v, %v; want an error wrapping ErrBlocked", trick, u, got, err)
			}
		}
	}
}

func TestCheckURLAllows(t *testing.T) {
	t.Parallel()
	for _, u := range allowed {
		if _, err := CheckURL(u, &Policy{}); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", u, err)
		}
	}
}

func TestCheckURLBadURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "http://exa mple.com/", "http://%31%32%37.0.0.1/", "http://256.0.0.1/", strings.Repeat("a", 5000)} {
		_, err := CheckURL(u, nil)
		if !errors.Is(err, ErrBadURL) || !errors.Is(err, ErrBlocked) {
			t.Errorf("CheckURL(%q) = %v; want ErrBadURL and ErrBlocked", u, err)
		}
	}
	if _, err := CheckURL("http://127.0.0.1/", nil); errors.Is(err, ErrBadURL) {
		t.Errorf("CheckURL(loopback) = %v; a well-formed internal URL is blocked, not bad", err)
	}
}

func TestCheckURLLength(t *testing.T) {
	t.Parallel()
	base := "https://example.com/"
	ok := base + strings.Repeat("a", MaxURLLen-len(base))
	if _, err := CheckURL(ok, nil); err != nil {
		t.Errorf("CheckURL(%d bytes) = %v, want nil", len(ok), err)
	}
	if _, err := CheckURL(ok+"a", nil); !errors.Is(err, ErrBlocked) {
		t.Errorf("CheckURL(%d bytes) = %v, want ErrBlocked", len(ok)+1, err)
	}
}

// CheckURL returns the URL with its host in the canonical form that is
// fetched, so an allowed host written in a strange encoding is fetched as
// the address that was checked.
func TestCheckURLCanonical(t *testing.T) {
	t.Parallel()
	p := &Policy{Allow: []string{"127.0.0.1:8080", "intranet.local"}}
	tests := []struct{ in, want string }{
		{"HTTP://Example.COM./a?b#c", "http://example.com/a?b#c"},
		{"http://134744072:81/", "http://8.8.8.8:81/"},
		{"http://0x7f.1:8080/x", "http://127.0.0.1:8080/x"},
		{"http://[::FFFF:8.8.8.8]/", "http://[::ffff:8.8.8.8]/"},
		{"https://MÜNCHEN.de/", "https://xn--mnchen-3ya.de/"},
		{"http://Intranet.Local./", "http://intranet.local/"},
	}
	for _, tt := range tests {
		u, err := CheckURL(tt.in, p)
		if err != nil {
			t.Errorf("CheckURL(%q) = %v", tt.in, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("CheckURL(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestCheckURLAllowList(t *testing.T) {
	t.Parallel()
	p := &Policy{Allow: []string{"127.0.0.1:8080", "intranet.local", "[::1]:9000", "10.0.0.5", "localhost:3000", " bad entry/", "host:0"}}
	tests := []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:8080/", true},
		{"http://2130706433:8080/", true}, // same address, another encoding
		{"http://127.1:8080/", true},
		{"http://[::ffff:127.0.0.1]:8080/", true},
		{"http://127.0.0.1:8081/", false}, // another port
		{"http://127.0.0.1/", false},      // default port 80
		{"http://127.0.0.2:8080/", false}, // another address
		{"http://intranet.local/", true},
		{"https://intranet.local:8443/", true}, // no port in the entry: any port
		{"http://INTRANET.LOCAL./", true},
		{"http://evil.intranet.local/", false}, // an entry is one host, not its subdomains
		{"http://[::1]:9000/", true},
		{"http://[::1]:9001/", false},
		{"http://10.0.0.5:22/", true},
		{"http://10.0.0.6/", false},
		{"http://localhost:3000/", true},
		{"http://localhost:3001/", false},
		{"http://user@127.0.0.1:8080/", false}, // allowing a host does not allow credentials
		{"gopher://127.0.0.1:8080/", false},    // nor other schemes
	}
	for _, tt := range tests {
		_, err := CheckURL(tt.url, p)
		if got := err == nil; got != tt.want {
			t.Errorf("CheckURL(%q) error = %v; want allowed %v", tt.url, err, tt.want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	good := &Policy{Allow: []string{"127.0.0.1:8080", "intranet.local", "[::1]:9000", "::1", "[fd00::1]", "0x7f.1"}}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
	for _, e := range []string{"http://x/", "a b", "host:0", "host:", "host:http", "[::1", "user@host", "", "127.0.0.1.1"} {
		p := &Policy{Allow: []string{e}}
		if err := p.Validate(); err == nil {
			t.Errorf("Validate(%q) = nil, want an error", e)
		}
	}
	if err := (*Policy)(nil).Validate(); err != nil {
		t.Errorf("nil Validate() = %v", err)
	}
}

// The refusal text names the host and why; it never names the allow-list.
func TestRefusalText(t *testing.T) {
	t.Parallel()
	p := &Policy{Allow: []string{"secret-intranet.local:8443"}}
	_, err := CheckURL("http://127.0.0.1/", p)
	if err == nil || strings.Contains(err.Error(), "secret-intranet") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("CheckURL error = %v; want it to name 127.0.0.1 and not the allow-list", err)
	}
}
