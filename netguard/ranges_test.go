package netguard

import (
	"net/netip"
	"testing"
)

func TestInternal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip   string
		want bool
	}{
		// 0.0.0.0/8
		{"0.0.0.0", true}, {"0.255.255.255", true}, {"1.0.0.0", false},
		// 10.0.0.0/8
		{"9.255.255.255", false}, {"10.0.0.0", true}, {"10.255.255.255", true}, {"11.0.0.0", false},
		// 100.64.0.0/10
		{"100.63.255.255", false}, {"100.64.0.0", true}, {"100.127.255.255", true}, {"100.128.0.0", false},
		// 127.0.0.0/8
		{"126.255.255.255", false}, {"127.0.0.0", true}, {"127.0.0.1", true}, {"127.255.255.255", true}, {"128.0.0.0", false},
		// 169.254.0.0/16, the metadata address among them
		{"169.253.255.255", false}, {"169.254.0.0", true}, {"169.254.169.254", true}, {"169.254.255.255", true}, {"169.255.0.0", false},
		// 172.16.0.0/12
		{"172.15.255.255", false}, {"172.16.0.0", true}, {"172.31.255.255", true}, {"172.32.0.0", false},
		// 192.0.0.0/24
		{"191.255.255.255", false}, {"192.0.0.0", true}, {"192.0.0.255", true}, {"192.0.1.0", false},
		// 192.168.0.0/16
		{"192.167.255.255", false}, {"192.168.0.0", true}, {"192.168.255.255", true}, {"192.169.0.0", false},
		// 198.18.0.0/15
		{"198.17.255.255", false}, {"198.18.0.0", true}, {"198.19.255.255", true}, {"198.20.0.0", false},
		// 224.0.0.0/4 multicast, 240.0.0.0/4 reserved and broadcast
		{"223.255.255.255", false}, {"224.0.0.0", true}, {"239.255.255.255", true}, {"240.0.0.0", true}, {"255.255.255.255", true},
		// public v4
		{"8.8.8.8", false}, {"93.184.215.14", false}, {"1.1.1.1", false},

		// IPv6 unspecified, loopback and the compatible block
		{"::", true}, {"::1", true}, {"::2", true}, {"::127.0.0.1", true}, {"::10.0.0.1", true}, {"::8.8.8.8", true},
		{"::1:0:0", false}, // just past ::/96, and no v4 form
		// unique local fc00::/7
		{"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false}, {"fc00::", true}, {"fd00::1", true}, {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true}, {"fe00::", false},
		// link-local fe80::/10, site-local fec0::/10
		{"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false}, {"fe80::", true}, {"fe80::1", true}, {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true},
		{"fec0::1", true}, {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true},
		// multicast ff00::/8
		{"ff00::", true}, {"ff02::1", true}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true},
		// discard 100::/64
		{"100::1", true}, {"100:0:0:1::", false},
		// public v6
		{"2606:4700:4700::1111", false}, {"2001:4860:4860::8888", false},

		// IPv4-mapped
		{"::ffff:127.0.0.1", true}, {"::ffff:7f00:1", true}, {"::ffff:10.1.2.3", true}, {"::ffff:169.254.169.254", true},
		{"::ffff:0.0.0.0", true}, {"::ffff:255.255.255.255", true}, {"::ffff:8.8.8.8", false},
		// SIIT ::ffff:0:a.b.c.d
		{"::ffff:0:127.0.0.1", true}, {"::ffff:0:192.168.1.1", true}, {"::ffff:0:8.8.8.8", false},
		// NAT64 64:ff9b::/96 and local-use 64:ff9b:1::/48
		{"64:ff9b::127.0.0.1", true}, {"64:ff9b::a9fe:a9fe", true}, {"64:ff9b::8.8.8.8", false}, {"64:ff9b:1::8.8.8.8", true},
		// 6to4 2002::/16 carries the v4 in bits 16-47
		{"2002:7f00:1::", true}, {"2002:c0a8:101::1", true}, {"2002:808:808::1", false},
		// Teredo 2001::/32: server in bits 32-63, client inverted in the last 32
		{"2001:0:7f00:1::", true}, {"2001:0:808:808:0:0:80ff:fffe", true}, {"2001:0:808:808:0:0:f7f7:f7f7", false},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.ip)
		if got := Internal(ip); got != tt.want {
			t.Errorf("Internal(%s) = %v, want %v", tt.ip, got, tt.want)
		}
	}
}

func TestInternalZoneAndZero(t *testing.T) {
	t.Parallel()
	if !Internal(netip.Addr{}) {
		t.Error("Internal(zero Addr) = false, want true: what cannot be judged is refused")
	}
	if !Internal(netip.MustParseAddr("fe80::1%eth0")) {
		t.Errorf("Internal(%s) = false, want true", "fe80::1%eth0")
	}
	if Internal(netip.MustParseAddr("2606:4700::1%eth0")) {
		t.Errorf("Internal(%s) = true: a zone does not make a public address internal", "2606:4700::1%eth0")
	}
}

// Every address of every v4 range must be refused in every v6 form that
// carries it; check the edges of each range in each form.
func TestInternalV6Forms(t *testing.T) {
	t.Parallel()
	for _, s := range internal4 {
		first := s.prefix.Addr()
		last := lastAddr(s.prefix)
		for _, v4 := range []netip.Addr{first, last} {
			b := v4.As4()
			forms := map[string]netip.Addr{
				"mapped":     netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
				"compatible": netip.AddrFrom16([16]byte{12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
				"siit":       netip.AddrFrom16([16]byte{8: 0xff, 9: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
				"nat64":      netip.AddrFrom16([16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
				"6to4":       netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: b[0], 3: b[1], 4: b[2], 5: b[3]}),
			}
			for name, ip := range forms {
				if !Internal(ip) {
					t.Errorf("Internal(%s) = false for the %s form of %s (%s)", ip, name, v4, s.what)
				}
			}
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
