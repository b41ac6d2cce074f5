package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/netguard"
)

// spyResolver counts lookups; it answers with a loopback address the
// guard refuses, so nothing is ever dialed.
type spyResolver struct{ n *atomic.Int64 }

func (r spyResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.n.Add(1)
	return nil, errors.New("no")
}

// FuzzServeConn feeds the proxy whatever a client may send (HTTP, CONNECT,
// SOCKS5, junk): it must never panic or hang, and with an empty allowlist
// it must never resolve a name, let alone dial.
func FuzzServeConn(f *testing.F) {
	for _, s := range []string{
		"CONNECT example.org:443 HTTP/1.1\r\n\r\n",
		"GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\n\r\n",
		"\x05\x01\x00\x05\x01\x00\x03\x0bexample.org\x01\xbb",
		"\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50",
		"\x05\x02\x01\x02",
		"\x05\x01\x00\x05\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x50",
		"GET / HTTP/1.1\r\n\r\n",
		"\x16\x03\x01",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var lookups atomic.Int64
		p, err := New(Config{Guard: &netguard.Policy{Resolver: spyResolver{&lookups}}})
		if err != nil {
			t.Fatal(err)
		}
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() {
			p.ServeConn(context.Background(), server)
			close(done)
		}()
		go func() {
			client.Write(in) // fails once the proxy has closed its end
			client.Close()   // the proxy reads EOF after the input
		}()
		go io.Copy(io.Discard, client)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("ServeConn did not return for %q", in)
		}
		client.Close()
		if lookups.Load() != 0 {
			t.Fatalf("%q: the proxy resolved a name with an empty allowlist", in)
		}
	})
}
