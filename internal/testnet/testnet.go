//go:build linux

// Package testnet gives tests a host of their own on a network the test
// makes: a network namespace (ip netns) joined to rein's by a veth pair,
// with addresses from a documentation range (198.51.100.0/24, TEST-NET-2)
// that netguard treats as public, so a test can reach it through rein's
// guards without opening internal addresses and without touching the
// outside world. It needs root and iproute2; tests call testenv.Need with
// the "netns" component when New fails.
package testnet

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Host is a test host in its own network namespace.
type Host struct {
	// Addr is the host's address; Gateway is rein's end of the link.
	Addr, Gateway netip.Addr
	name          string // the namespace's name under /run/netns
	outer, inner  string // rein's end of the veth pair, and the host's
	ns            *os.File
}

// New makes a namespace and a veth pair with a random /30 of
// 198.51.100.0/24 and returns the host at its far end. Close removes
// both.
func New(ctx context.Context) (*Host, error) { return NewTagged(ctx, "t") }

// NewTagged is New with tag in the namespace's name (rein-TAG…), so that
// tests of several packages sharing a machine can tell their
// namespaces apart.
func NewTagged(ctx context.Context, tag string) (*Host, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("making a network namespace needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("iproute2: %w", err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:3])
	sub, err := freeSubnet(binary.BigEndian.Uint16(b[2:]))
	if err != nil {
		return nil, err
	}
	outer, inner := "rv"+id+"a", "rv"+id+"b"
	h := &Host{
		name:    "rein-" + tag + id,
		outer:   outer,
		inner:   inner,
		Gateway: netip.AddrFrom4([4]byte{198, 51, 100, sub + 1}),
		Addr:    netip.AddrFrom4([4]byte{198, 51, 100, sub + 2}),
	}
	steps := [][]string{
		{"netns", "add", h.name},
		{"link", "add", outer, "type", "veth", "peer", "name", inner},
		{"link", "set", inner, "netns", h.name},
		{"addr", "add", h.Gateway.String() + "/30", "dev", outer},
		{"link", "set", outer, "up"},
		{"-n", h.name, "addr", "add", h.Addr.String() + "/30", "dev", inner},
		{"-n", h.name, "link", "set", inner, "up"},
		{"-n", h.name, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if out, err := exec.CommandContext(ctx, "ip", s...).CombinedOutput(); err != nil {
			_ = h.Close()
			_ = exec.Command("ip", "link", "del", outer).Run()
			return nil, fmt.Errorf("ip %s: %w: %s", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
		}
	}
	f, err := os.Open("/run/netns/" + h.name)
	if err != nil {
		_ = h.Close()
		return nil, err
	}
	h.ns = f
	return h, nil
}

// Listen makes a TCP listener on the host's address and port (0: any),
// inside its namespace; the test serves it from its own process.
func (h *Host) Listen(port int) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := unix.Setns(int(h.ns.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("entering %s: %w", h.name, err)}
			return
		}
		ln, err := net.Listen("tcp", netip.AddrPortFrom(h.Addr, uint16(port)).String())
		ch <- result{ln, err}
	}()
	r := <-ch
	return r.ln, r.err
}

// Shape limits what the host sends to rate (tc's syntax: "1gbit",
// "100mbit"), as a link of that speed would: for measures of what a
// download costs where the network, not the CPU, sets its pace.
func (h *Host) Shape(ctx context.Context, rate string) error {
	args := []string{"-n", h.name, "qdisc", "replace", "dev", h.inner, "root", "tbf", "rate", rate, "burst", "512kb", "latency", "100ms"}
	if out, err := exec.CommandContext(ctx, "tc", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("tc %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Close removes the namespace and with it the veth pair.
func (h *Host) Close() error {
	if h.ns != nil {
		h.ns.Close()
	}
	// Both ends of the pair, and the route to the host, go at once: left
	// to the namespace's teardown (asynchronous in the kernel), a dying
	// host could still answer for its addresses when the next test picks
	// the same ones, and refuse that test's connections.
	_ = exec.Command("ip", "link", "del", h.outer).Run()
	if out, err := exec.Command("ip", "netns", "del", h.name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns del %s: %w: %s", h.name, err, out)
	}
	return nil
}

// freeSubnet returns the first octet of a /30 of 198.51.100.0/24, tried
// from start on, that no interface of this namespace has an address in:
// tests running at once (here or in another package's process) and hosts
// still being torn down keep theirs.
func freeSubnet(start uint16) (byte, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return 0, fmt.Errorf("listing this namespace's addresses: %w", err)
	}
	used := map[byte]bool{}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip := n.IP.To4(); ip != nil && ip[0] == 198 && ip[1] == 51 && ip[2] == 100 {
				used[ip[3]&^3] = true
			}
		}
	}
	for i := range uint16(64) {
		sub := byte((start + i) % 64 * 4)
		if !used[sub] {
			return sub, nil
		}
	}
	return 0, errors.New("every /30 of 198.51.100.0/24 is in use here")
}
