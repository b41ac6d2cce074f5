package netguard

import (
	"errors"
	"net/netip"
	"strings"
)

// errNumeric marks a host that looks like an IPv4 address but is not one.
var errNumeric = errors.New("the host looks like a numeric address but is malformed")

// endsInNumber reports whether a host name must be read as an IPv4 address,
// the way the WHATWG URL standard decides it: its last label (after one
// trailing dot) is all digits, or a 0x/0X hexadecimal number. Such a host
// is an address or nothing; it is never looked up as a name.
func endsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if allDigits(last) {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return allHex(last[2:])
	}
	return false
}

// parseIPv4 reads an IPv4 address written as inet_aton and browsers accept
// it: one to four parts separated by dots (one trailing dot allowed), each
// decimal, octal (leading 0) or hexadecimal (leading 0x); the last part
// fills the bytes the others left, so 127.1, 0x7f000001 and 2130706433 are
// all 127.0.0.1.
func parseIPv4(host string) (netip.Addr, error) {
	host = strings.TrimSuffix(host, ".")
	var parts [4]uint64
	n := 0
	for {
		if n == len(parts) {
			return netip.Addr{}, errNumeric
		}
		part := host
		dot := strings.IndexByte(host, '.')
		if dot >= 0 {
			part, host = host[:dot], host[dot+1:]
		}
		v, ok := parseIPv4Number(part)
		if !ok {
			return netip.Addr{}, errNumeric
		}
		parts[n] = v
		n++
		if dot < 0 {
			break
		}
	}
	for _, v := range parts[:n-1] {
		if v > 255 {
			return netip.Addr{}, errNumeric
		}
	}
	last := parts[n-1]
	if last >= 1<<(8*(5-n)) {
		return netip.Addr{}, errNumeric
	}
	for i, v := range parts[:n-1] {
		last |= v << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(last >> 24), byte(last >> 16), byte(last >> 8), byte(last)}), nil
}

// parseIPv4Number reads one part: 0x hexadecimal (0x alone is 0), 0 octal,
// else decimal. Values past 2^32 fail.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d, ok := digitValue(s[i])
		if !ok || d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xFFFFFFFF {
			return 0, false
		}
	}
	return v, true
}

func digitValue(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if _, ok := digitValue(s[i]); !ok {
			return false
		}
	}
	return true
}
