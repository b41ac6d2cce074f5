//go:build linux

package egress

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/internal/testnet"
	"github.com/reinhq/rein/netguard"
)

// BenchmarkDownload fetches 10 MB from a test host in its own network
// namespace, directly and through the proxy, interleaved, and reports the
// median of each and their ratio (proxy/direct; the target is at most
// 1.2). One op is one download each way. link=veth is the bare veth pair,
// where the CPU sets the pace (about 4 GB/s); link=1gbit limits what the
// host sends to 1 Gbit/s (tc's tbf), where the network does, as for a
// download from outside.
//
//	go test -run '^$' -bench BenchmarkDownload -benchtime 50x ./egress/
func BenchmarkDownload(b *testing.B) {
	for _, rate := range []string{"", "1gbit"} {
		name := "link=veth"
		if rate != "" {
			name = "link=" + rate
		}
		b.Run(name, func(b *testing.B) { benchDownload(b, rate) })
	}
}

func benchDownload(b *testing.B, rate string) {
	h, err := testnet.New(b.Context())
	testenv.Need(b, "netns", err)
	b.Cleanup(func() { _ = h.Close() })
	if rate != "" {
		if err := h.Shape(b.Context(), rate); err != nil {
			b.Fatal(err)
		}
	}
	blob := make([]byte, 10<<20)
	rand.Read(blob)
	ln, err := h.Listen(80)
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(blob) })}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })

	p, err := New(Config{Allow: []string{"files.test"}, Guard: &netguard.Policy{Resolver: benchResolver{h.Addr}}, MaxBytes: -1, MaxConns: -1})
	if err != nil {
		b.Fatal(err)
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, pl) }()
	b.Cleanup(func() { cancel(); <-done })

	// New connections every time, as a command makes them: no keep-alive.
	direct := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	b.Run("via=http", func(b *testing.B) {
		proxied := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
			Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: pl.Addr().String()})}}
		compare(b, direct, proxied, "http://"+netip.AddrPortFrom(h.Addr, 80).String()+"/", int64(len(blob)))
	})
	// A CONNECT tunnel, as for https (plain HTTP inside, so that TLS
	// does not weigh on both sides and hide the proxy's cost).
	tunnel := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := net.Dial("tcp", pl.Addr().String())
			if err != nil {
				return nil, err
			}
			io.WriteString(c, "CONNECT files.test:80 HTTP/1.1\r\n\r\n")
			var buf [len("HTTP/1.1 200 Connection established\r\n\r\n")]byte
			if _, err := io.ReadFull(c, buf[:]); err != nil || string(buf[9:12]) != "200" {
				c.Close()
				return nil, fmt.Errorf("CONNECT: %q %v", buf, err)
			}
			return c, nil
		}}}
	b.Run("via=connect", func(b *testing.B) {
		compare(b, direct, tunnel, "http://"+netip.AddrPortFrom(h.Addr, 80).String()+"/", int64(len(blob)))
	})
	// The floor under both: a bare relay that copies each connection to
	// the host and back, spliced, with nothing else (no request read, no
	// allowlist, no record). relay/direct is what any relay costs here;
	// connect/relay is what the proxy adds to that.
	relay := bareRelay(b, netip.AddrPortFrom(h.Addr, 80).String())
	relayed := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return net.Dial("tcp", relay)
		}}}
	b.Run("via=relay", func(b *testing.B) {
		compare(b, direct, relayed, "http://"+netip.AddrPortFrom(h.Addr, 80).String()+"/", int64(len(blob)))
	})
	b.Run("via=connect-vs-relay", func(b *testing.B) {
		compare(b, relayed, tunnel, "http://"+netip.AddrPortFrom(h.Addr, 80).String()+"/", int64(len(blob)))
	})
}

// bareRelay serves on loopback a relay of every connection to up, copied
// both ways with io.Copy (spliced by the kernel between the two TCP
// sockets), and returns its address.
func bareRelay(b *testing.B, up string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", up)
				if err != nil {
					return
				}
				defer u.Close()
				go func() {
					_, _ = io.Copy(u, c)
					_ = u.(*net.TCPConn).CloseWrite()
				}()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	return ln.Addr().String()
}

// compare downloads u directly and through proxied, interleaved, and
// reports the medians and their ratio.
func compare(b *testing.B, direct, proxied *http.Client, u string, size int64) {
	get := func(c *http.Client, u string) time.Duration {
		start := time.Now()
		resp, err := c.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != size {
			b.Fatalf("%s: %d bytes, %v", u, n, err)
		}
		return time.Since(start)
	}
	directURL, proxyURL := u, strings.Replace(u, strings.Split(u, "/")[2], "files.test", 1)
	get(direct, directURL) // warm both paths
	get(proxied, proxyURL)
	var d, pr []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			d = append(d, get(direct, directURL))
			pr = append(pr, get(proxied, proxyURL))
		} else {
			pr = append(pr, get(proxied, proxyURL))
			d = append(d, get(direct, directURL))
		}
	}
	med := func(x []time.Duration) float64 {
		slices.Sort(x)
		return float64(x[len(x)/2])
	}
	md, mp := med(d), med(pr)
	b.ReportMetric(md, "direct-ns")
	b.ReportMetric(mp, "proxy-ns")
	b.ReportMetric(mp/md, "ratio")
}

type benchResolver struct{ a netip.Addr }

func (r benchResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{r.a}, nil
}
