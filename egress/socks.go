package egress

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"
)

// SOCKS5 (RFC 1928), the part a client needs to open a TCP connection:
// no authentication, the CONNECT command, and IPv4, IPv6 and domain
// addresses. Names are best sent as names (socks5h://), so the proxy
// resolves them and the allowlist judges the name.
const (
	socksVersion   = 0x05
	socksNoAuth    = 0x00
	socksNoMethod  = 0xff
	socksConnect   = 0x01
	socksAtypIPv4  = 0x01
	socksAtypName  = 0x03
	socksAtypIPv6  = 0x04
	socksOK        = 0x00
	socksFailure   = 0x01
	socksNotAllow  = 0x02
	socksHostUnrch = 0x04
	socksBadCmd    = 0x07
	socksBadAtyp   = 0x08
)

// serveSOCKS serves a SOCKS5 client.
func (p *Proxy) serveSOCKS(ctx context.Context, c net.Conn, br *bufio.Reader) Conn {
	rec := Conn{Proto: "socks5"}
	host, port, code, err := readSOCKS(c, br)
	if err != nil {
		rec.Reason = "bad SOCKS5 request: " + err.Error()
		if code != 0 {
			socksReply(c, code)
		}
		return rec
	}
	rec.Host, rec.Port = host, port
	up, err := p.open(ctx, &rec)
	if err != nil {
		code := byte(socksHostUnrch)
		if errors.Is(err, ErrRefused) {
			code = socksNotAllow
		}
		socksReply(c, code)
		return rec
	}
	defer up.Close()
	socksReply(c, socksOK)
	_ = c.SetReadDeadline(time.Time{})
	var buffered []byte
	if n := br.Buffered(); n > 0 {
		buffered, _ = br.Peek(n)
	}
	rec.Up, rec.Down, rec.Reason = p.pipe(c, up, buffered)
	return rec
}

// readSOCKS reads the greeting and the request, answering the greeting;
// on an error, code is the reply to send (0: none).
func readSOCKS(c net.Conn, br *bufio.Reader) (host string, port int, code byte, err error) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return "", 0, 0, err
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", 0, 0, err
	}
	ok := false
	for _, m := range methods {
		ok = ok || m == socksNoAuth
	}
	if !ok {
		_, _ = c.Write([]byte{socksVersion, socksNoMethod})
		return "", 0, 0, errors.New("the client offers no method without authentication")
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return "", 0, 0, err
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return "", 0, 0, err
	}
	if req[0] != socksVersion {
		return "", 0, socksFailure, fmt.Errorf("version %d", req[0])
	}
	if req[1] != socksConnect {
		return "", 0, socksBadCmd, fmt.Errorf("command %d: only CONNECT is served", req[1])
	}
	switch req[3] {
	case socksAtypIPv4, socksAtypIPv6:
		n := 4
		if req[3] == socksAtypIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, 0, err
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case socksAtypName:
		l, err := br.ReadByte()
		if err != nil {
			return "", 0, 0, err
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, 0, err
		}
		if host, err = canonicalHost(string(b)); err != nil {
			return "", 0, socksFailure, err
		}
	default:
		return "", 0, socksBadAtyp, fmt.Errorf("address type %d", req[3])
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return "", 0, 0, err
	}
	port = int(binary.BigEndian.Uint16(pb[:]))
	if port == 0 {
		return "", 0, socksFailure, errors.New("port 0")
	}
	return host, port, 0, nil
}

// socksReply answers a request with code and an empty bound address.
func socksReply(c net.Conn, code byte) {
	_, _ = c.Write([]byte{socksVersion, code, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
}
