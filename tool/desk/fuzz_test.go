package desk_test

import (
	"encoding/json"
	"errors"
	"net/mail"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/desk"
)

// FuzzCheckAddress checks that whatever CheckAddress accepts is one bare
// ASCII address with one "@" and a dotted domain that the standard parser
// reads back unchanged, and that whatever it refuses is an ErrAddress.
func FuzzCheckAddress(f *testing.F) {
	for _, s := range []string{
		"kontakt@firma.pl", "Ann <ann@firma.pl>", "a@b.com, c@d.com", "a@b.com\r\nBcc: c@d.com",
		`"a@b"@c.com`, "a@[1.2.3.4]", "a@b", "a@b.c.", ".a@b.co", "a..b@c.de", "ä@b.de", "a@xn--fsq.com",
		"a@b.co(c)", "=?utf-8?q?a?=@b.co", "a@10.0.0.1", "a@b-.co", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		err := desk.CheckAddress(addr)
		if err != nil {
			if !errors.Is(err, desk.ErrAddress) {
				t.Fatalf("CheckAddress(%q) = %v, not an ErrAddress", addr, err)
			}
			return
		}
		if strings.Count(addr, "@") != 1 {
			t.Fatalf("accepted %q with %d @ signs", addr, strings.Count(addr, "@"))
		}
		for i := range len(addr) {
			if c := addr[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"<>()[],;:\`, c) >= 0 {
				t.Fatalf("accepted %q holding %q", addr, c)
			}
		}
		_, domain, _ := strings.Cut(addr, "@")
		if !strings.Contains(domain, ".") || strings.HasSuffix(domain, ".") || strings.HasPrefix(domain, ".") {
			t.Fatalf("accepted %q with domain %q", addr, domain)
		}
		if p, perr := mail.ParseAddress(addr); perr != nil || p.Address != addr || p.Name != "" {
			t.Fatalf("accepted %q, which net/mail reads as %+v, %v", addr, p, perr)
		}
		if len(addr) > desk.MaxAddress {
			t.Fatalf("accepted %d bytes", len(addr))
		}
	})
}

// FuzzSendReply checks that a reply is sent to exactly the address a gate
// reads from the same arguments, and only when that address passes
// CheckAddress: what is judged is what is sent.
func FuzzSendReply(f *testing.F) {
	for _, s := range []string{
		`{"address":"kontakt@firma.pl","body":"x"}`,
		`{"address":"kontakt@firma.pl","body":"x","address":"evil@obcy.example"}`,
		`{"address":"kontakt@firma.pl","body":"x","ADDRESS":"evil@obcy.example"}`,
		`{"address":"kontakt@firma.pl","body":"x","addr\u0065ss":"evil@obcy.example"}`,
		`{"address":"kontakt@firm\u0061.pl","body":"x"}`,
		`{"address":"kontakt@firma.pl\u0000","body":"x"}`,
		`{"address":"kontakt@firma.pl","body":"x"} {"address":"evil@obcy.example"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		s := desk.Demo()
		send := desk.SendReply(s)
		out, err := send.Run(t.Context(), json.RawMessage(args))
		got := s.Replies()
		if err != nil {
			if len(got) != 0 || out != "" {
				t.Fatalf("an error (%v) and yet %q, replies %+v", err, out, got)
			}
			return
		}
		if len(got) != 1 {
			t.Fatalf("%d replies after one call", len(got))
		}
		c := &gate.Call{Name: "send_reply", Args: json.RawMessage(args), Tool: send}
		judged, ok := c.Str("address")
		if !ok || judged != got[0].Address || c.Role("address") != tool.RoleRecipient {
			t.Fatalf("the gate judged %q (%v) but the reply went to %q", judged, ok, got[0].Address)
		}
		if err := desk.CheckAddress(got[0].Address); err != nil {
			t.Fatalf("sent to %q, which CheckAddress refuses: %v", got[0].Address, err)
		}
	})
}
