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
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/mcp"
)

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
// log), opened at the session's handshake and closed when the host ends
// it or after idle without a request. The tools offered are those the
// upstream servers list now (Handler connects once to see them); a tool
// a later session's server no longer offers is refused in that session.
// The host's headers, its token included, never reach an upstream server.
// Sessions live within ctx: cancelling it stops their servers.
func (g *Gateway) Handler(ctx context.Context, token string, idle time.Duration) (http.Handler, error) {
	if len(token) < 16 {
		return nil, errors.New("gateway: the bearer token must have at least 16 characters")
	}
	probe, err := mcp.Connect(ctx, g.opts.MCP, g.opts.Connect)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	tools := probe.Tools()
	_ = probe.Close()
	var mu sync.Mutex
	sessions := map[*sdk.ServerSession]*hostSession{}
	srv := g.server(tools, func(ss *sdk.ServerSession) (*hostSession, error) {
		mu.Lock()
		defer mu.Unlock()
		if hs := sessions[ss]; hs != nil {
			return hs, nil
		}
		hs, err := g.open(ctx)
		if err != nil {
			g.notice("a host's session could not start: %v", err)
			return nil, err
		}
		sessions[ss] = hs
		hs.onClose = func() {
			mu.Lock()
			delete(sessions, ss)
			mu.Unlock()
		}
		hs.bind(ss)
		return hs, nil
	})
	mcpH := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{SessionTimeout: idle})
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
