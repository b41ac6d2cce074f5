//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// egressState is the running egress proxy of an executor: a listener
// inside the sandbox's network namespace, served by rein itself. No
// process forwards: rein's proxy accepts the command's connection
// directly (the socket belongs to the namespace it was made in).
type egressState struct {
	cancel context.CancelFunc
	done   chan error
}

// startEgress listens on 127.0.0.1:ProxyPort inside the network namespace
// ns (bringing its loopback up) and serves srv there until stop.
func startEgress(ns *os.File, srv EgressServer) (*egressState, error) {
	if ns == nil {
		return nil, errors.New("the egress proxy needs the executor's own network namespace, which rein makes only as root: run rein as root, or without network ([sandbox.network] allow empty)")
	}
	ln, err := listenInNetns(ns, ProxyPort)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &egressState{cancel: cancel, done: make(chan error, 1)}
	go func() { e.done <- srv.Serve(ctx, ln) }()
	return e, nil
}

// stop ends the proxy and waits for its connections.
func (e *egressState) stop() error {
	if e == nil {
		return nil
	}
	e.cancel()
	return <-e.done
}

// listenInNetns makes a TCP listener on 127.0.0.1:port inside ns, with
// the loopback there up. It does so on a thread of its own that enters ns
// and is then thrown away (never unlocked, so the Go runtime ends it): no
// thread of rein that runs anything else ever leaves rein's namespace.
func listenInNetns(ns *os.File, port int) (net.Listener, error) {
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result, 1)
	onOwnThread(func() { // never the main thread, never unlocked: the thread dies with fn
		fd, err := func() (int, error) {
			if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
				return -1, fmt.Errorf("entering the sandbox's network namespace: %w", err)
			}
			if err := loopbackUp(); err != nil {
				return -1, err
			}
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
			if err != nil {
				return -1, fmt.Errorf("socket: %w", err)
			}
			sa := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
			if err := unix.Bind(fd, sa); err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("bind 127.0.0.1:%d in the sandbox: %w", port, err)
			}
			if err := unix.Listen(fd, 128); err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("listen: %w", err)
			}
			return fd, nil
		}()
		ch <- result{fd, err}
	})
	r := <-ch
	if r.err != nil {
		return nil, r.err
	}
	f := os.NewFile(uintptr(r.fd), "egress-listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("listener: %w", err)
	}
	return ln, nil
}

// ListenProxyIn makes the egress proxy's listener, 127.0.0.1:ProxyPort,
// inside the network namespace ns (an open /proc/PID/ns/net, a
// container's), bringing its loopback up. Serve it with an EgressServer;
// commands there reach it at ProxyAddr. It needs CAP_SYS_ADMIN over ns.
func ListenProxyIn(ns *os.File) (net.Listener, error) {
	return listenInNetns(ns, ProxyPort)
}

// loopbackUp sets the IFF_UP flag of "lo" in the calling thread's
// network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bringing the loopback up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing the loopback up: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing the loopback up: %w", err)
	}
	return nil
}
