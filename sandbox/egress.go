package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Network policies of the landlock backend (Landlock.Net).
const (
	// NetNone: no network at all.
	NetNone = "none"
	// NetProxy: the command reaches the network only through the
	// executor's egress proxy (Landlock.Egress), which listens on
	// 127.0.0.1:ProxyPort inside the command's network namespace.
	NetProxy = "proxy"
)

// ProxyPort is the port the egress proxy listens on inside a sandbox's
// network namespace (127.0.0.1 there, which is nothing of the host's).
const ProxyPort = 3128

// EgressServer serves the connections a sandbox's commands open to its
// egress proxy: Serve accepts on ln until ctx ends, then closes ln and
// returns once every connection it served is done. *egress.Proxy
// satisfies it.
type EgressServer interface {
	Serve(ctx context.Context, ln net.Listener) error
}

// proxyVars are the variables ProxyEnv sets, both cases, since tools
// differ on which they read (curl reads http_proxy only in lower case,
// Go and pip read either).
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY"}

// ProxyEnv returns env without any proxy variable it had, and with
// HTTP_PROXY and HTTPS_PROXY pointing at an HTTP proxy on addr
// ("127.0.0.1:3128"), ALL_PROXY at the same port as SOCKS5 with names
// resolved by the proxy (socks5h), and NO_PROXY naming only the
// loopback, in upper and lower case.
func ProxyEnv(env []string, addr string) []string {
	out := make([]string, 0, len(env)+2*len(proxyVars))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, v := range proxyVars {
			drop = drop || strings.EqualFold(name, v)
		}
		if !drop {
			out = append(out, kv)
		}
	}
	set := map[string]string{
		"HTTP_PROXY":  "http://" + addr,
		"HTTPS_PROXY": "http://" + addr,
		"ALL_PROXY":   "socks5h://" + addr,
		"NO_PROXY":    "localhost,127.0.0.1,::1",
	}
	for _, v := range proxyVars[:4] {
		out = append(out, v+"="+set[v], strings.ToLower(v)+"="+set[v])
	}
	return out
}

// EgressStatus reports whether the landlock backend can give commands the
// egress proxy here (Landlock.Net NetProxy): nil, or an error wrapping
// ErrUnsupported that says why not. The landlock backend itself must work
// too (LandlockStatus).
func EgressStatus() error {
	switch {
	case runtime.GOOS != "linux":
		return fmt.Errorf("%w: the egress proxy needs the landlock backend (Linux)", ErrUnsupported)
	case os.Geteuid() != 0:
		return fmt.Errorf("%w: the egress proxy needs rein to run as root (it listens inside the sandbox's network namespace)", ErrUnsupported)
	}
	return nil
}

// proxyAddr is the proxy's address inside a sandbox.
func proxyAddr() string { return ProxyAddr() }

// ProxyAddr is the egress proxy's address inside a sandbox's network
// namespace, for ProxyEnv: 127.0.0.1:ProxyPort.
func ProxyAddr() string { return "127.0.0.1:" + strconv.Itoa(ProxyPort) }
