package netguard

import (
	"errors"
	"testing"
)

func TestParseIPv4(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "" means malformed
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0177.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f.0.0.0x1", "127.0.0.1"},
		{"0x7f.0x0.0x0.0x1", "127.0.0.1"},
		{"00000000177.0.0.1", "127.0.0.1"},
		{"0x00000000007f.1", "127.0.0.1"},
		{"10.1", "10.0.0.1"},
		{"192.168.257", "192.168.1.1"},
		{"169.254.43518", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"0x.0x.0x.0x", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"8.8.8.8", "8.8.8.8"},
		{"134744072", "8.8.8.8"},

		{"4294967296", ""},           // past 32 bits
		{"256.0.0.1", ""},            // a non-last part over 255
		{"1.2.3.256", ""},            // the last of four over 255
		{"1.2.65536", ""},            // the last of three over 65535
		{"1.16777216", ""},           // the last of two over 2^24-1
		{"1.2.3.4.5", ""},            // five parts
		{"08.0.0.1", ""},             // 8 is not an octal digit
		{"0x7g.1", ""},               // g is not hex
		{"1..1", ""},                 // empty part
		{".1", ""},                   // empty first part
		{"1.2.3.4..", ""},            // two trailing dots
		{"99999999999999999999", ""}, // overflow
		{"0x100000000", ""},          // overflow in hex
	}
	for _, tt := range tests {
		got, err := parseIPv4(tt.in)
		if tt.want == "" {
			if !errors.Is(err, errNumeric) {
				t.Errorf("parseIPv4(%q) = %v, %v; want errNumeric", tt.in, got, err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("parseIPv4(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestEndsInNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"127.0.0.1", true}, {"example.com", false}, {"1.2.3.4a", false}, {"a.0x10", true},
		{"foo.123", true}, {"0x", true}, {"0xg", false}, {"127.0.0.1.", true}, {".", false},
		{"example.com.", false}, {"x.", false}, {"a.b.09", true},
	}
	for _, tt := range tests {
		if got := endsInNumber(tt.in); got != tt.want {
			t.Errorf("endsInNumber(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
