package approve

import (
	"errors"

	"golang.org/x/sys/unix"
)

// isTTY reports whether fd is a terminal: it has terminal attributes
// (TCGETS), which /dev/null, files and pipes do not.
func isTTY(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// flushInput discards what was typed at terminal fd and not read yet
// (tcflush TCIFLUSH) and reports whether there was any.
func flushInput(fd int) (bool, error) {
	n, _ := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err := unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH); err != nil {
		return false, err
	}
	return n > 0, nil
}

// termSize returns terminal fd's columns and rows.
func termSize(fd int) (cols, rows int, err error) {
	ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0, err
	}
	if ws.Col == 0 || ws.Row == 0 {
		return 0, 0, errors.New("the terminal reports no size")
	}
	return int(ws.Col), int(ws.Row), nil
}

// readable waits up to ms milliseconds (0: not at all) for input on fd.
func readable(fd int, ms int) (bool, error) {
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, err
		}
		return n > 0, nil
	}
}

// readFD reads from fd once.
func readFD(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Read(fd, p)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err
	}
}
