//go:build linux

package sandbox_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/internal/testnet"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/sandbox"
)

// staticResolver resolves the test's names: the proxy's resolver is the
// hook through which a test controls what a name resolves to.
type staticResolver map[string]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// testHost starts a host in its own network namespace serving blob over
// HTTP (port 80) and HTTPS (443, with a certificate for files.test that
// it writes to caFile), counting the connections it accepts.
func testHost(t *testing.T, blob []byte, caFile string) (*testnet.Host, *atomic.Int64) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Need(t, "netns", fmt.Errorf("network namespaces for test hosts need root"))
	}
	h, err := testnet.New(t.Context())
	testenv.Need(t, "netns", err)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	var accepted atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/blob", func(w http.ResponseWriter, r *http.Request) { w.Write(blob) })
	cert := selfSigned(t, "files.test", caFile)
	for _, port := range []int{80, 443} {
		ln, err := h.Listen(port)
		if err != nil {
			t.Fatal(err)
		}
		ln = countAccepts{ln, &accepted}
		srv := &http.Server{Handler: mux}
		if port == 443 {
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
			ln = tls.NewListener(ln, srv.TLSConfig)
		}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	return h, &accepted
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

// selfSigned makes a certificate for name and writes it, as PEM, to file.
func selfSigned(t *testing.T, name, file string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

type connLog struct {
	mu    sync.Mutex
	conns []egress.Conn
}

func (l *connLog) record(c egress.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conns = append(l.conns, c)
}

// TestLandlockEgress runs real tools in the landlock sandbox with the
// egress proxy: downloads from an allowed host work over HTTP, HTTPS
// (CONNECT) and SOCKS5, by curl and wget; a host off the list, a name
// that resolves to loopback, an allowed host on another port and every
// direct socket fail, and none of them reaches the test host.
func TestLandlockEgress(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	blob := make([]byte, 1<<20)
	rand.Read(blob)
	sum := sha256.Sum256(blob)
	want := hex.EncodeToString(sum[:])
	host, accepted := testHost(t, blob, filepath.Join(work, "ca-bundle.txt"))
	log := &connLog{}
	proxy, err := egress.New(egress.Config{
		Allow: []string{"files.test", "loop.test"},
		Guard: &netguard.Policy{Resolver: staticResolver{
			"files.test":    host.Addr,
			"unlisted.test": host.Addr,
			"loop.test":     netip.MustParseAddr("127.0.0.1"),
		}},
		Record: log.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := newLandlock(t, &sandbox.Landlock{Net: sandbox.NetProxy, Egress: proxy})
	l.WorkDir = work

	run := func(script string) sandbox.Result {
		t.Helper()
		res, err := l.Exec(t.Context(), sandbox.Cmd{Script: script, Dir: work, Env: sandbox.MinimalEnv(), Timeout: 60 * time.Second})
		if err != nil {
			t.Fatalf("Exec %q: %v", script, err)
		}
		return res
	}
	legit := []struct{ name, script string }{
		{"curl http", `curl -sSf http://files.test/blob | sha256sum`},
		{"curl https through CONNECT", `curl -sSf --cacert ca-bundle.txt https://files.test/blob | sha256sum`},
		{"curl socks5h", `curl -sSf -x "$ALL_PROXY" http://files.test/blob | sha256sum`},
		{"wget http", `wget -qO- http://files.test/blob | sha256sum`},
	}
	for _, c := range legit {
		res := run(c.script)
		if res.ExitCode != 0 || !strings.HasPrefix(res.Stdout, want) {
			t.Errorf("%s: exit %d, %q; want the blob's sum %s\nstderr: %s", c.name, res.ExitCode, res.Stdout, want[:12], res.Stderr)
		}
	}
	if n := accepted.Load(); n != int64(len(legit)) {
		t.Fatalf("the test host accepted %d connections after %d downloads", n, len(legit))
	}

	addr := host.Addr.String()
	attacks := []struct{ name, script, want string }{
		{"host off the list", `curl -s -o /dev/null -w '%{http_code}' http://unlisted.test/blob`, "403"},
		{"host off the list, https", `curl -s -o /dev/null -w '%{http_connect}' --cacert ca-bundle.txt https://unlisted.test/blob`, "403"},
		{"name resolving to loopback", `curl -s -o /dev/null -w '%{http_code}' http://loop.test/blob`, "403"},
		{"internal address", `curl -s -o /dev/null -w '%{http_code}' http://10.1.2.3/blob`, "403"},
		{"loopback through the proxy", `NO_PROXY= no_proxy= curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1/blob`, "403"},
		{"CONNECT to a port not allowed", `curl -s -o /dev/null -p -w '%{http_connect}' http://files.test:8080/blob`, "403"},
		{"direct, proxy ignored", `curl -s --noproxy '*' --connect-timeout 5 http://` + addr + `/blob >/dev/null || echo refused`, "refused"},
		{"direct through bash's /dev/tcp", `(exec 3<>/dev/tcp/` + addr + `/80) 2>/dev/null || echo refused`, "refused"},
		{"direct to another loopback port", `(exec 3<>/dev/tcp/127.0.0.1/22) 2>/dev/null || echo refused`, "refused"},
		{"IPv6 loopback", `(exec 3<>/dev/tcp/::1/3128) 2>/dev/null || echo refused`, "refused"},
	}
	for _, a := range attacks {
		res := run(a.script)
		if strings.TrimSpace(res.Stdout) != a.want {
			t.Errorf("%s: stdout %q, want %q\nstderr: %s", a.name, res.Stdout, a.want, res.Stderr)
		}
	}
	// The control: the same direct socket works from outside the sandbox,
	// so "refused" above is the sandbox's doing.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "80"), 5*time.Second); err != nil {
		t.Errorf("control: direct connection from rein: %v", err)
	} else {
		c.Close()
	}
	for i := 0; i < 200 && accepted.Load() < int64(len(legit))+1; i++ {
		time.Sleep(10 * time.Millisecond) // the server counts when its Accept returns
	}
	if n := accepted.Load(); n != int64(len(legit))+1 {
		t.Errorf("the test host accepted %d connections: an attack reached it", n-int64(len(legit))-1)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	allowed, refused := 0, 0
	for _, c := range log.conns {
		if c.Allowed {
			allowed++
			if c.Down < int64(len(blob)) {
				t.Errorf("allowed connection %+v: fewer bytes than the blob", c)
			}
		} else {
			refused++
			if c.Reason == "" {
				t.Errorf("refused connection %+v without a reason", c)
			}
		}
	}
	if allowed != len(legit) || refused != 6 {
		t.Errorf("records: %d allowed, %d refused; want %d and 6: %+v", allowed, refused, len(legit), log.conns)
	}
}

// TestLandlockEgressNeedsProxy: the proxy policy without a server is
// refused at the first command, not run without one.
func TestLandlockEgressNeedsProxy(t *testing.T) {
	l, work := newLandlock(t, &sandbox.Landlock{Net: sandbox.NetProxy})
	_, err := l.Exec(t.Context(), sandbox.Cmd{Script: "true", Dir: work, Env: sandbox.MinimalEnv()})
	if err == nil || !strings.Contains(err.Error(), "egress") {
		t.Fatalf("Exec: %v, want an error about the missing egress proxy", err)
	}
}
