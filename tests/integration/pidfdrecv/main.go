// pidfdrecv is the receiving end of --pidfd-socket for the tests: it
// listens on SOCKET, takes one pidfd (SCM_RIGHTS), writes "KIND PID" (the
// message sent with it and the pid the pidfd refers to, from its fdinfo)
// to OUT, and on SIGTERM sends SIGKILL through the pidfd and exits.
//
//	pidfdrecv SOCKET OUT
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pidfdrecv:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return errors.New("usage: pidfdrecv SOCKET OUT")
	}
	sockPath, out := os.Args[1], os.Args[2]
	term := make(chan os.Signal, 1)
	signal.Notify(term, unix.SIGTERM)
	ln, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := unix.Bind(ln, &unix.SockaddrUnix{Name: sockPath}); err != nil {
		return err
	}
	// The runtime may run as another user (the rootless suite).
	if err := os.Chmod(sockPath, 0o777); err != nil {
		return err
	}
	if err := unix.Listen(ln, 1); err != nil {
		return err
	}
	conn, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC)
	if err != nil {
		return err
	}
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(conn, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return fmt.Errorf("recvmsg: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return fmt.Errorf("want one control message, got %d (%v)", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return fmt.Errorf("want one descriptor, got %d (%v)", len(fds), err)
	}
	pid, err := fdinfoPid(fds[0])
	if err != nil {
		return err
	}
	if err := os.WriteFile(out+".tmp", []byte(fmt.Sprintf("%s %d\n", buf[:n], pid)), 0o644); err != nil {
		return err
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return err
	}
	<-term
	return unix.PidfdSendSignal(fds[0], unix.SIGKILL, nil, 0)
}

// fdinfoPid is the pid a pidfd refers to ("Pid:" in its fdinfo; not a
// pidfd: an error).
func fdinfoPid(fd int) (int, error) {
	f, err := os.Open("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("fd %d is not a pidfd", fd)
}
