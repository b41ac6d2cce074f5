package docker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/internal/testnet"
	"github.com/reinhq/rein/netguard"
)

type staticResolver map[string]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

type countAccepts struct {
	net.Listener
	n *atomic.Int64
}

func (c countAccepts) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.n.Add(1)
	}
	return conn, err
}

// stageTestHost starts a host in a network namespace of its own
// (rein-stage…) serving blob over HTTP on port 80, counting connections.
func stageTestHost(t *testing.T, blob []byte) (*testnet.Host, *atomic.Int64) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Need(t, "netns", fmt.Errorf("network namespaces for test hosts need root"))
	}
	h, err := testnet.NewTagged(t.Context(), "stage")
	testenv.Need(t, "netns", err)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	var accepted atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/blob", func(w http.ResponseWriter, r *http.Request) { w.Write(blob) })
	ln, err := h.Listen(80)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(countAccepts{ln, &accepted})
	t.Cleanup(func() { srv.Close() })
	return h, &accepted
}

// TestDockerEgress: with an egress proxy, a container's commands download
// from an allowed host through it (busybox wget reads http_proxy), and
// nothing else: a host off the list, a name that resolves to loopback, an
// internal address and every direct socket fail, none reaches the test
// host, and every connection through the proxy is recorded.
func TestDockerEgress(t *testing.T) {
	needImage(t)
	blob := make([]byte, 1<<20)
	rand.Read(blob)
	sum := sha256.Sum256(blob)
	want := hex.EncodeToString(sum[:])
	host, accepted := stageTestHost(t, blob)
	var mu sync.Mutex
	var conns []egress.Conn
	proxy, err := egress.New(egress.Config{
		Allow: []string{"files.test", "loop.test"},
		Guard: &netguard.Policy{Resolver: staticResolver{
			"files.test":    host.Addr,
			"unlisted.test": host.Addr,
			"loop.test":     netip.MustParseAddr("127.0.0.1"),
		}},
		Record: func(c egress.Conn) { mu.Lock(); conns = append(conns, c); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	e, work := start(t, Options{Egress: proxy, Session: "stage-egress-" + randomHex(4)})
	run := func(script string) string {
		t.Helper()
		return strings.TrimSpace(run(t, e, work, script).Stdout)
	}
	if got := run(`wget -qO- http://files.test/blob | sha256sum`); !strings.HasPrefix(got, want) {
		t.Fatalf("download through the proxy: %q, want the blob's sum %s", got, want[:12])
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the test host accepted %d connections after one download", n)
	}
	addr := host.Addr.String()
	attacks := []struct{ name, script string }{
		{"host off the list", `wget -qO- http://unlisted.test/blob >/dev/null 2>&1 || echo refused`},
		{"name resolving to loopback", `wget -qO- http://loop.test/blob >/dev/null 2>&1 || echo refused`},
		{"internal address", `wget -qO- http://10.1.2.3/blob >/dev/null 2>&1 || echo refused`},
		{"the docker bridge's gateway", `wget -qO- http://172.17.0.1/ >/dev/null 2>&1 || echo refused`},
		{"direct, proxy off", `wget -Y off -T 5 -qO- http://` + addr + `/blob >/dev/null 2>&1 || echo refused`},
		{"direct socket", `echo | nc -w 5 ` + addr + ` 80 >/dev/null 2>&1 || echo refused`},
		{"direct to another loopback port", `echo | nc -w 2 127.0.0.1 22 >/dev/null 2>&1 || echo refused`},
	}
	for _, a := range attacks {
		if got := run(a.script); got != "refused" {
			t.Errorf("%s: %q, want refused", a.name, got)
		}
	}
	// The control: the same direct socket works from rein, so "refused"
	// above is the sandbox's doing.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "80"), 5*time.Second); err != nil {
		t.Errorf("control: direct connection from rein: %v", err)
	} else {
		c.Close()
	}
	for i := 0; i < 200 && accepted.Load() < 2; i++ {
		time.Sleep(10 * time.Millisecond) // the server counts when its Accept returns
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("the test host accepted %d connections: an attack reached it", n-2)
	}
	mu.Lock()
	defer mu.Unlock()
	allowed, refused := 0, 0
	for _, c := range conns {
		if c.Allowed {
			allowed++
		} else if c.Reason != "" {
			refused++
		}
	}
	if allowed != 1 || refused != 4 {
		t.Errorf("records: %d allowed, %d refused with a reason; want 1 and 4: %+v", allowed, refused, conns)
	}
}

// TestDockerEgressEnv: only an executor with a proxy sets the proxy
// variables, replacing any the caller passed.
func TestDockerEgressEnv(t *testing.T) {
	needImage(t)
	if err := egressSupported(); err != nil {
		testenv.Need(t, "root", err)
	}
	proxy, err := egress.New(egress.Config{Allow: []string{"files.test"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"with a proxy", Options{Egress: proxy}, "http://127.0.0.1:3128"},
		{"without", Options{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Session = "stage-env-" + randomHex(4)
			e, work := start(t, c.o)
			res := run(t, e, work, `printf %s "$http_proxy"`)
			if res.Stdout != c.want {
				t.Errorf("http_proxy = %q, want %q", res.Stdout, c.want)
			}
		})
	}
}
