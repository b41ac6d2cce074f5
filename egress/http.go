package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// serveHTTP serves a client that speaks HTTP: a CONNECT tunnel, or one
// plain http:// request (the connection then closes).
func (p *Proxy) serveHTTP(ctx context.Context, c net.Conn, br *bufio.Reader) Conn {
	req, err := http.ReadRequest(br)
	if err != nil {
		httpError(c, http.StatusBadRequest, "rein egress proxy: cannot read the request: "+err.Error())
		return Conn{Proto: "http", Reason: "cannot read the request: " + err.Error()}
	}
	if req.Method == http.MethodConnect {
		return p.serveConnect(ctx, c, br, req)
	}
	return p.servePlain(ctx, c, req)
}

// serveConnect opens a tunnel to the request's host:port.
func (p *Proxy) serveConnect(ctx context.Context, c net.Conn, br *bufio.Reader, req *http.Request) Conn {
	rec := Conn{Proto: "connect"}
	host, port, err := target(req.Host, 0)
	if err != nil {
		rec.Reason = "bad CONNECT target: " + err.Error()
		httpError(c, http.StatusBadRequest, "rein egress proxy: "+rec.Reason)
		return rec
	}
	rec.Host, rec.Port = host, port
	up, err := p.open(ctx, &rec)
	if err != nil {
		httpError(c, statusOf(err), refusal(err))
		return rec
	}
	defer up.Close()
	if _, err := c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		rec.Reason = "the client went away"
		return rec
	}
	_ = c.SetReadDeadline(time.Time{})
	var buffered []byte
	if n := br.Buffered(); n > 0 {
		buffered, _ = br.Peek(n)
	}
	rec.Up, rec.Down, rec.Reason = p.pipe(c, up, buffered)
	return rec
}

// servePlain forwards one http:// request and its response.
func (p *Proxy) servePlain(ctx context.Context, c net.Conn, req *http.Request) Conn {
	rec := Conn{Proto: "http"}
	if req.URL == nil || !strings.EqualFold(req.URL.Scheme, "http") || req.URL.Host == "" {
		rec.Reason = "not a proxy request: want an absolute http:// URL, or CONNECT for https"
		httpError(c, http.StatusBadRequest, "rein egress proxy: "+rec.Reason)
		return rec
	}
	host, port, err := target(req.URL.Host, 80)
	if err != nil {
		rec.Reason = "bad URL host: " + err.Error()
		httpError(c, http.StatusBadRequest, "rein egress proxy: "+rec.Reason)
		return rec
	}
	rec.Host, rec.Port = host, port
	up, err := p.open(ctx, &rec)
	if err != nil {
		httpError(c, statusOf(err), refusal(err))
		return rec
	}
	defer up.Close()
	_ = c.SetReadDeadline(time.Time{})
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Upgrade", "Te", "Trailer"} {
		req.Header.Del(h)
	}
	req.Close = true // one request per connection: what follows is the response alone
	cu := &counted{Conn: up, p: p}
	if err := req.Write(cu); err != nil {
		rec.Up = cu.n
		rec.Reason = "sending the request: " + err.Error()
		if errors.Is(err, errLimit) {
			rec.Reason = fmt.Sprintf("cut: the session's limit of %d proxied bytes is reached", p.maxBytes)
		}
		httpError(c, http.StatusBadGateway, "rein egress proxy: "+rec.Reason)
		return rec
	}
	// The request asked the server to close after its response, so the
	// response is everything the server sends: it goes back as it came,
	// spliced by the kernel, and the connection ends with it.
	rec.Up = cu.n
	rec.Down, rec.Reason = p.copy(c, up)
	return rec
}

// open admits and dials rec's host and port, setting rec's address and
// verdict.
func (p *Proxy) open(ctx context.Context, rec *Conn) (net.Conn, error) {
	if err := p.admit(rec.Host, rec.Port); err != nil {
		rec.Reason = err.Error()
		return nil, err
	}
	up, err := p.dial(ctx, rec.Host, rec.Port)
	if err != nil {
		rec.Reason = err.Error()
		return nil, err
	}
	rec.Addr, rec.Allowed = up.RemoteAddr().String(), true
	return up, nil
}

// statusOf is the HTTP status for a failure to open a connection.
func statusOf(err error) int {
	if errors.Is(err, ErrRefused) {
		return http.StatusForbidden
	}
	return http.StatusBadGateway
}

// errLimit is a write refused because the byte limit is reached.
var errLimit = errors.New("byte limit reached")

// counted counts what is written to a connection (n) against the
// proxy's byte limit.
type counted struct {
	net.Conn
	p *Proxy
	n int64
}

func (c *counted) Write(b []byte) (int, error) {
	if c.p.maxBytes > 0 && c.p.bytes.Add(int64(len(b))) > c.p.maxBytes {
		return 0, errLimit
	}
	n, err := c.Conn.Write(b)
	c.n += int64(n)
	return n, err
}
