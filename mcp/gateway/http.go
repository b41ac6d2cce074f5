package gateway

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// handshake is how long a new HTTP session may take to complete MCP's
// handshake before its upstream servers are stopped.
const handshake = 30 * time.Second

// NewToken returns a fresh bearer token (256 random bits, hex).
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// CheckLoopback refuses an address that is not on the loopback
// interface: the gateway's tools act with the user's rights.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %s: %v: give HOST:PORT, like 127.0.0.1:8931", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--http %s: the gateway listens on loopback only (127.0.0.1 or [::1]): its tools act with your rights", addr)
	}
	return nil
}

// Handler serves hosts over streamable HTTP: every request must carry
// "Authorization: Bearer TOKEN"; each MCP session a host opens is a
// session of the gateway's (its own upstream servers, gates and audit
// log), closed when the host ends it or after idle of inactivity. The
// host's headers, its token included, never reach an upstream server.
// Sessions are opened with ctx: cancelling it stops their servers.
func (g *Gateway) Handler(ctx context.Context, token string, idle time.Duration) (http.Handler, error) {
	if len(token) < 16 {
		return nil, errors.New("gateway: the bearer token must have at least 16 characters")
	}
	mcpH := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		hs, err := g.open(ctx)
		if err != nil {
			g.notice("a host's session could not start: %v", err)
			return nil
		}
		// The session ends when the host's connection does (see open); a
		// host that never completes the handshake is closed after a while.
		time.AfterFunc(handshake, func() {
			if hs.peer.Load() == nil {
				hs.close()
			}
		})
		return hs.srv
	}, &sdk.StreamableHTTPOptions{SessionTimeout: idle})
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="rein-gateway"`)
			http.Error(w, "rein gateway: a bearer token is required (Authorization: Bearer TOKEN, printed when the gateway started)", http.StatusUnauthorized)
			return
		}
		r.Header.Del("Authorization")
		mcpH.ServeHTTP(w, r)
	}), nil
}
