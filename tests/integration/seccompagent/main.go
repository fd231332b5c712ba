// Command seccompagent is the integration tests' seccomp helper.
//
//	seccompagent listen SOCKET STATEFILE ERRNO
//
// listens on the AF_UNIX socket SOCKET for the runtime, as a seccomp agent
// does (runtime-spec "listenerPath"): it accepts one connection, writes the
// ContainerProcessState JSON it receives to STATEFILE, and answers every
// notification of the filter's fd with ERRNO (0 lets the call through),
// until the container is gone.
//
//	seccompagent profile
//
// prints Docker's default profile (the runtime's specconv.DefaultSeccompSpec
// for the default spec) as linux.seccomp JSON.
//
//	seccompagent below NR
//
// reads a JSON array of system call names on stdin and prints, as a JSON
// array, those whose number on this architecture is below NR: a profile
// as written for the kernels before that call existed.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

func main() {
	var err error
	switch {
	case len(os.Args) == 5 && os.Args[1] == "listen":
		err = listen(os.Args[2], os.Args[3], os.Args[4])
	case len(os.Args) == 2 && os.Args[1] == "profile":
		err = profile()
	case len(os.Args) == 3 && os.Args[1] == "below":
		err = below(os.Args[2])
	default:
		err = errors.New("usage: seccompagent listen SOCKET STATEFILE ERRNO | seccompagent profile | seccompagent below NR")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "seccompagent:", err)
		os.Exit(1)
	}
}

func profile() error {
	s, err := specconv.DefaultSeccompSpec(specconv.Example())
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(s)
}

func below(nrArg string) error {
	limit, err := strconv.Atoi(nrArg)
	if err != nil {
		return fmt.Errorf("number %q: %w", nrArg, err)
	}
	var names []string
	if err := json.NewDecoder(os.Stdin).Decode(&names); err != nil {
		return fmt.Errorf("read names: %w", err)
	}
	kept := []string{}
	for _, n := range names {
		nr, err := libseccomp.GetSyscallFromName(n)
		if err == nil && nr >= 0 && int(nr) < limit {
			kept = append(kept, n)
		}
	}
	return json.NewEncoder(os.Stdout).Encode(kept)
}

func listen(path, stateFile, errnoArg string) error {
	errno, err := strconv.Atoi(errnoArg)
	if err != nil {
		return fmt.Errorf("errno %q: %w", errnoArg, err)
	}
	l, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	// Bound under a temporary name and renamed: the test waits for SOCKET
	// to appear, and then it already accepts connections.
	tmp := path + ".tmp"
	if err := unix.Bind(l, &unix.SockaddrUnix{Name: tmp}); err != nil {
		return fmt.Errorf("bind %s: %w", tmp, err)
	}
	if err := unix.Listen(l, 1); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	conn, _, err := unix.Accept4(l, unix.SOCK_CLOEXEC)
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	buf := make([]byte, 1<<16)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(conn, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return fmt.Errorf("recvmsg: %w", err)
	}
	var fds []int
	cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return err
	}
	for _, c := range cmsgs {
		got, err := unix.ParseUnixRights(&c)
		if err == nil {
			fds = append(fds, got...)
		}
	}
	if len(fds) != 1 {
		return fmt.Errorf("received %d fds, want 1", len(fds))
	}
	if err := os.WriteFile(stateFile, buf[:n], 0o644); err != nil {
		return err
	}
	fd := libseccomp.ScmpFd(fds[0])
	for {
		req, err := libseccomp.NotifReceive(fd)
		if err != nil {
			// ENOENT: every process of the filter has exited.
			return nil
		}
		resp := &libseccomp.ScmpNotifResp{ID: req.ID, Error: int32(errno)}
		if errno == 0 {
			resp.Flags = libseccomp.NotifRespFlagContinue
		}
		name, _ := req.Data.Syscall.GetNameByArch(req.Data.Arch)
		fmt.Fprintf(os.Stderr, "seccompagent: pid %d: %s: answered %d\n", req.Pid, name, errno)
		_ = libseccomp.NotifRespond(fd, resp)
	}
}
