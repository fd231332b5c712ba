package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/containerd/console"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

var runCommand = &cli.Command{
	Name:      "run",
	Usage:     "create and start a container, and by default wait for it in the foreground",
	ArgsUsage: "<container-id>",
	Description: `In the foreground, signals sent to nanobox-runc are forwarded to the
container's init, and nanobox-runc exits with the container's exit status
(128+N when it was killed by signal N). The container is deleted when it
exits, unless --keep is given.`,
	Flags: append([]cli.Flag{
		&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "start the container and exit without waiting"},
		&cli.BoolFlag{Name: "keep", Usage: "do not delete the container after it exits"},
	}, createFlags...),
	Action: func(c *cli.Context) error {
		code, err := runContainer(c)
		if err != nil {
			return err
		}
		os.Exit(code)
		return nil
	},
}

// runContainer is create + start (+ wait, delete) and returns the exit code.
func runContainer(c *cli.Context) (int, error) {
	detach := c.Bool("detach")
	// A foreground container with a terminal and no console socket gets a
	// pty that this process relays to its own stdio.
	var ttyPeer, ttyChild *os.File
	if !detach && c.String("console-socket") == "" {
		var err error
		if ttyPeer, ttyChild, err = consolePair(); err != nil {
			return 0, err
		}
		defer ttyPeer.Close()
	}
	// Signals are caught before init exists so that none is lost between
	// create and the forwarding loop.
	sigs := make(chan os.Signal, 32)
	if !detach {
		signal.Notify(sigs)
		defer signal.Stop(sigs)
	}
	ctr, err := createContainer(c, ttyChild)
	if ttyChild != nil {
		ttyChild.Close()
	}
	if err != nil {
		return 0, err
	}
	if detach {
		if err := warnOrFail(ctr.Start()); err != nil {
			_ = ctr.Delete(true)
			return 0, err
		}
		return 0, nil
	}
	var tty *ttyRelay
	if ctr.Config().Process.Terminal {
		if tty, err = startTTYRelay(ttyPeer); err != nil {
			_ = ctr.Delete(true)
			return 0, err
		}
		defer tty.restore()
	}
	if err := warnOrFail(ctr.Start()); err != nil {
		_ = ctr.Delete(true)
		return 0, err
	}
	ws, err := forwardAndWait(ctr.Pid(), sigs, tty, func(s unix.Signal) { _ = ctr.Signal(s, false) })
	if err != nil {
		return 0, err
	}
	warnOOM(ctr) // before delete removes the cgroup that counted it
	if !c.Bool("keep") {
		if err := warnOrFail(ctr.Delete(true)); err != nil {
			return 0, err
		}
	}
	return libbox.ExitCode(ws), nil
}

// forwardAndWait reaps pid (a child of this process) while forwarding the
// signals arriving on sigs to it, and resizing the pty on SIGWINCH.
func forwardAndWait(pid int, sigs chan os.Signal, tty *ttyRelay, forward func(unix.Signal)) (unix.WaitStatus, error) {
	type result struct {
		ws  unix.WaitStatus
		err error
	}
	done := make(chan result, 1)
	go func() {
		var ws unix.WaitStatus
		for {
			_, err := unix.Wait4(pid, &ws, 0, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			done <- result{ws, err}
			return
		}
	}()
	for {
		select {
		case s := <-sigs:
			switch sig := s.(unix.Signal); sig {
			case unix.SIGCHLD, unix.SIGURG, unix.SIGPIPE:
				// SIGURG is the Go runtime's preemption signal, not the user's.
			case unix.SIGWINCH:
				if tty != nil {
					tty.resize()
				}
			default:
				forward(sig)
			}
		case r := <-done:
			if r.err != nil {
				return 0, fmt.Errorf("wait for process %d: %w", pid, r.err)
			}
			if tty != nil {
				tty.wait()
			}
			return r.ws, nil
		}
	}
}

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
