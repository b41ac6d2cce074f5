// Package egress is the network a sandboxed command gets: an HTTP proxy
// (plain requests and CONNECT tunnels) that also speaks SOCKS5, and lets a
// command reach only the hosts on the session's allowlist
// ([sandbox.network] allow).
//
// For every connection it judges the host and port against the allowlist,
// then dials through netguard's guarded dialer: it resolves the name
// itself, refuses when any address is internal (loopback, private,
// link-local, …) unless netguard's own allow-list opens that host, and
// connects only to an address it checked, so a name that resolves anew to
// an internal address (DNS rebinding) is never reached. Every connection,
// allowed or refused, is reported (host, port, address, bytes each way,
// why) to Config.Record, which the session writes to the audit log, and
// counts against the session's limits on connections and bytes.
//
// It will not: look inside TLS (a CONNECT tunnel is opaque; the allowlist
// judges the name the client asked for, and the connection goes to that
// name's checked address whatever the client says in its SNI), cache, or
// authenticate clients. Who can reach it is the caller's business: the
// sandbox hands it a listener inside the command's network namespace.
package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein/netguard"
)

// Defaults for a zero Config.
const (
	// DefaultMaxConns is how many connections a session may open through
	// the proxy.
	DefaultMaxConns = 4096
	// DefaultMaxBytes is how many bytes, both ways together, a session may
	// move through the proxy.
	DefaultMaxBytes = 8 << 30
	// headerTimeout bounds how long a client may take to say where it
	// wants to go.
	headerTimeout = 30 * time.Second
	// chunk is how much is moved between two looks at the byte limit.
	chunk = 1 << 20
)

// ErrRefused is wrapped by every refusal: the host or port is not on the
// allowlist, the address is internal, or a limit was reached.
var ErrRefused = errors.New("egress refused")

// Conn is what the proxy reports of one connection.
type Conn struct {
	// Proto is how the client asked: "http" (a plain request), "connect"
	// (an HTTP CONNECT tunnel) or "socks5".
	Proto string
	// Host and Port are what the client asked for (the host in canonical
	// form); Host is empty when the request could not be read.
	Host string
	Port int
	// Addr is the address dialed, "" when none was.
	Addr string
	// Allowed says whether the connection went through; Reason says why
	// not, or why it ended early (a limit).
	Allowed bool
	Reason  string
	// Up and Down are the bytes moved from the client to the server and
	// back, after the request itself.
	Up, Down int64
	// Duration is from the request to the end of the connection.
	Duration time.Duration
}

// Config says what the proxy lets through.
type Config struct {
	// Allow is the allowlist (see ParseRule). Empty refuses everything.
	Allow []string
	// Guard is the dial-time guard: its allow-list opens internal hosts,
	// its resolver resolves names (a nil Guard: net.DefaultResolver and no
	// internal address).
	Guard *netguard.Policy
	// MaxConns bounds the connections of the proxy's lifetime (a
	// session); 0 means DefaultMaxConns, negative none.
	MaxConns int
	// MaxBytes bounds the bytes moved both ways over the proxy's
	// lifetime; 0 means DefaultMaxBytes, negative none. A connection that
	// reaches it is cut.
	MaxBytes int64
	// Record is told of every connection when it ends (a refused one at
	// once); it must not block for long. Nil records nothing.
	Record func(Conn)
}

// Proxy is the egress proxy. Build it with New; it is safe for concurrent
// use.
type Proxy struct {
	rules    []Rule
	guard    *netguard.Policy
	maxConns int64
	maxBytes int64
	record   func(Conn)

	conns atomic.Int64 // connections asked for
	bytes atomic.Int64 // bytes moved
}

// New checks cfg and returns its proxy.
func New(cfg Config) (*Proxy, error) {
	rules, err := ParseRules(cfg.Allow)
	if err != nil {
		return nil, err
	}
	if err := cfg.Guard.Validate(); err != nil {
		return nil, err
	}
	p := &Proxy{rules: rules, guard: cfg.Guard, record: cfg.Record, maxConns: int64(cfg.MaxConns), maxBytes: cfg.MaxBytes}
	if p.maxConns == 0 {
		p.maxConns = DefaultMaxConns
	}
	if p.maxBytes == 0 {
		p.maxBytes = DefaultMaxBytes
	}
	return p, nil
}

// Rules returns the parsed allowlist.
func (p *Proxy) Rules() []Rule { return append([]Rule(nil), p.rules...) }

// Serve accepts connections on ln and serves each until ctx ends or ln is
// closed; it closes ln and waits for every connection it served. The
// error is nil when ctx ended it.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			_ = ln.Close()
			return fmt.Errorf("egress: accept: %w", err)
		}
		wg.Go(func() { p.ServeConn(ctx, c) })
	}
}

// ServeConn serves one client connection and closes it. It returns when
// the connection ends or ctx does.
func (p *Proxy) ServeConn(ctx context.Context, c net.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	defer c.Close()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(headerTimeout))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return // nothing asked
	}
	var rec Conn
	if first[0] == socksVersion {
		rec = p.serveSOCKS(ctx, c, br)
	} else {
		rec = p.serveHTTP(ctx, c, br)
	}
	rec.Duration = time.Since(start)
	if p.record != nil {
		p.record(rec)
	}
}

// admit judges host:port against the allowlist and the connection limit,
// before any I/O.
func (p *Proxy) admit(host string, port int) error {
	if err := allowed(p.rules, host, port); err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if n := p.conns.Add(1); p.maxConns > 0 && n > p.maxConns {
		return fmt.Errorf("%w: the session's limit of %d proxied connections is reached", ErrRefused, p.maxConns)
	}
	if p.maxBytes > 0 && p.bytes.Load() >= p.maxBytes {
		return fmt.Errorf("%w: the session's limit of %d proxied bytes is reached", ErrRefused, p.maxBytes)
	}
	return nil
}

// dial connects to host:port through the guard; a refusal wraps
// ErrRefused.
func (p *Proxy) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	up, err := p.guard.DialContext(ctx, "tcp", addr)
	if errors.Is(err, netguard.ErrBlocked) {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", addr, err)
	}
	return up, nil
}

// target reads host and port from a request's host:port, with def when
// no port is given, in canonical form.
func target(hostport string, def int) (string, int, error) {
	host, port := hostport, def
	if h, ps, err := net.SplitHostPort(hostport); err == nil {
		n, err := parsePort(ps)
		if err != nil {
			return "", 0, err
		}
		host, port = h, n
	} else if def == 0 {
		return "", 0, fmt.Errorf("%q is not host:port", hostport)
	}
	h, err := canonicalHost(host)
	if err != nil {
		return "", 0, err
	}
	return h, port, nil
}

// pipe moves bytes both ways between client and server until both sides
// are done, or either fails, or the byte limit is reached; it returns
// the bytes moved each way and why it stopped early ("" for a normal
// end). Buffered holds what the client sent past its request.
func (p *Proxy) pipe(client, server net.Conn, buffered []byte) (up, down int64, why string) {
	var upWhy, downWhy string
	if len(buffered) > 0 {
		n, err := server.Write(buffered)
		up += int64(n)
		p.bytes.Add(int64(n))
		if err != nil {
			return up, 0, "writing to the server: " + err.Error()
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		var n int64
		n, upWhy = p.copy(server, client)
		up += n
	})
	n, downWhy := p.copy(client, server)
	down = n
	wg.Wait()
	switch {
	case upWhy != "":
		why = upWhy
	case downWhy != "":
		why = downWhy
	}
	return up, down, why
}

// copy moves src to dst in chunks (spliced by the kernel between TCP
// sockets), counting against the byte limit, and closes dst for writing
// at src's end. On an error or the limit it closes both.
func (p *Proxy) copy(dst, src net.Conn) (int64, string) {
	var total int64
	for {
		size := int64(chunk)
		if p.maxBytes > 0 {
			// Never more than the session has left, plus one byte to
			// tell "exactly used up" from "more wanted".
			size = min(size, max(p.maxBytes-p.bytes.Load(), 0)+1)
		}
		n, err := io.CopyN(dst, src, size)
		total += n
		used := p.bytes.Add(n)
		if p.maxBytes > 0 && used > p.maxBytes {
			_ = dst.Close()
			_ = src.Close()
			return total, fmt.Sprintf("cut: the session's limit of %d proxied bytes is reached", p.maxBytes)
		}
		if errors.Is(err, io.EOF) {
			closeWrite(dst)
			return total, ""
		}
		if err != nil {
			// A reset or a close by the other side: the connection is
			// over, which is not a refusal.
			_ = dst.Close()
			_ = src.Close()
			return total, ""
		}
	}
}

// closeWrite half-closes c where it can, else closes it.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// refusal is the text a client is told.
func refusal(err error) string {
	return "rein egress proxy: " + err.Error() + " (the session's [sandbox.network] allow list decides; ask the user to add the host)"
}

// httpError answers a client with code and a one-line text.
func httpError(c net.Conn, code int, msg string) {
	body := msg + "\n"
	_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Rein-Egress: refused\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}
