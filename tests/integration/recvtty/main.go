// Command recvtty is the integration suites' console-socket receiver (runc
// ships one of the same name): it listens on a unix socket, accepts one
// connection, receives the pty master a runtime sends with SCM_RIGHTS for
// `create/run --console-socket`, optionally writes input to it, and copies
// everything the container prints to the terminal into a file (or stdout)
// until the container side closes.
//
//	recvtty [-o OUT] [-i INPUT] [-mode 0777] SOCKET
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
)

func main() {
	out := flag.String("o", "", "write the terminal output to this file instead of stdout")
	input := flag.String("i", "", "write this text to the terminal once it is received")
	mode := flag.Uint("mode", 0o700, "permissions of the socket file (0777 lets another user connect)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: recvtty [-o OUT] [-i INPUT] [-mode MODE] SOCKET")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out, *input, os.FileMode(*mode)); err != nil {
		fmt.Fprintln(os.Stderr, "recvtty:", err)
		os.Exit(1)
	}
}

func run(path, outPath, input string, mode os.FileMode) error {
	// Bind under a temporary name and rename into place once the mode is
	// set: callers wait for SOCKET to exist, and then it must be usable.
	tmp := path + ".tmp"
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return err
	}
	ln.SetUnlinkOnClose(false)
	defer ln.Close()
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	defer os.Remove(path)
	conn, err := ln.AcceptUnix()
	if err != nil {
		return err
	}
	defer conn.Close()

	master, err := recvFd(conn)
	if err != nil {
		return err
	}
	defer master.Close()

	var w io.Writer = os.Stdout
	if outPath != "" {
		f, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if input != "" {
		if _, err := master.WriteString(input); err != nil {
			return fmt.Errorf("write input: %w", err)
		}
	}
	// Reading the master fails with EIO once every slave fd is closed, which
	// is how a container's exit looks from here.
	_, err = io.Copy(w, master)
	if err != nil && !errors.Is(err, syscall.EIO) {
		return err
	}
	return nil
}

// recvFd receives one descriptor sent with SCM_RIGHTS.
func recvFd(conn *net.UnixConn) (*os.File, error) {
	name := make([]byte, 4096)
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(name, oob)
	if err != nil {
		return nil, fmt.Errorf("receive console: %w", err)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("parse control message: %w", err)
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("expected one control message, got %d", len(msgs))
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil {
		return nil, fmt.Errorf("parse rights: %w", err)
	}
	if len(fds) != 1 {
		return nil, fmt.Errorf("expected one descriptor, got %d", len(fds))
	}
	return os.NewFile(uintptr(fds[0]), string(name[:n])), nil
}
