package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/containerd/console"
	"golang.org/x/sys/unix"
)

// consolePair is a socketpair standing in for --console-socket.
func consolePair() (peer, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("console socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "console-peer"), os.NewFile(uintptr(fds[1]), "console-child"), nil
}

// ttyRelay copies between this process's stdio and the container's pty.
type ttyRelay struct {
	pty     console.Console
	current console.Console
	out     chan struct{}
}

func startTTYRelay(sock *os.File) (*ttyRelay, error) {
	master, err := recvFd(sock)
	if err != nil {
		return nil, fmt.Errorf("receive pty master: %w", err)
	}
	pty, err := console.ConsoleFromFile(master)
	if err != nil {
		return nil, fmt.Errorf("pty master: %w", err)
	}
	// Our stdout is the caller's terminal (which adds its own CRs) or a
	// file: the container's "\n" must reach it as "\n", as with runc's
	// own relay. A console socket's receiver gets the pty as it is.
	if err := console.ClearONLCR(pty.Fd()); err != nil {
		return nil, fmt.Errorf("clear ONLCR on the pty: %w", err)
	}
	r := &ttyRelay{pty: pty, out: make(chan struct{})}
	if cur, err := console.ConsoleFromFile(os.Stdin); err == nil {
		if err := cur.SetRaw(); err == nil {
			r.current = cur
			r.resize()
		}
	}
	go func() { _, _ = io.Copy(pty, os.Stdin) }()
	go func() { _, _ = io.Copy(os.Stdout, pty); close(r.out) }()
	return r, nil
}

func (r *ttyRelay) resize() {
	if r.current != nil {
		_ = r.pty.ResizeFrom(r.current)
	}
}

// wait lets the output drain after the container exited: the copy ends with
// EIO once the last slave fd is closed.
func (r *ttyRelay) wait() { <-r.out }

func (r *ttyRelay) restore() {
	if r.current != nil {
		_ = r.current.Reset()
	}
}

// recvFd receives one descriptor sent with SCM_RIGHTS.
func recvFd(sock *os.File) (*os.File, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err == nil && len(fds) == 1 {
			return os.NewFile(uintptr(fds[0]), string(buf[:n])), nil
		}
	}
	return nil, errors.New("no descriptor in message")
}
