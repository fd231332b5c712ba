// Command sysprobe makes system calls and says how each went; the
// integration tests copy it (built static, CGO_ENABLED=0) into a container's
// rootfs.
//
//	sysprobe CALL...
//
// prints "CALL: ok" or "CALL: ERRNO-NAME" for each CALL: mount (a tmpfs on
// /tmp, unmounted again), unshare (a new UTS namespace), keyctl (join a new
// session keyring).
//
//	sysprobe without-landlock CMD ARGS...
//
// executes CMD with the Landlock system calls failing with ENOSYS, as on a
// kernel without Landlock (a seccomp filter; it sets no_new_privs).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "without-landlock" {
		if err := withoutLandlock(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "sysprobe:", err)
			os.Exit(127)
		}
	}
	for _, call := range os.Args[1:] {
		var err error
		switch call {
		case "mount":
			if err = unix.Mount("sysprobe", "/tmp", "tmpfs", 0, ""); err == nil {
				err = unix.Unmount("/tmp", 0)
			}
		case "unshare":
			err = unix.Unshare(unix.CLONE_NEWUTS)
		case "keyctl":
			// A new anonymous session keyring (NULL name).
			if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 {
				err = e
			}
		default:
			fmt.Fprintf(os.Stderr, "sysprobe: unknown call %q\n", call)
			os.Exit(2)
		}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			fmt.Printf("%s: %s\n", call, unix.ErrnoName(errno))
		} else if err != nil {
			fmt.Printf("%s: %v\n", call, err)
		} else {
			fmt.Printf("%s: ok\n", call)
		}
	}
}

func withoutLandlock(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	deny := unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_LANDLOCK_CREATE_RULESET, Jt: 3},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_LANDLOCK_ADD_RULE, Jt: 2},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_LANDLOCK_RESTRICT_SELF, Jt: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		{Code: unix.BPF_RET | unix.BPF_K, K: deny},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	// TSYNC: every thread of this Go process, whichever executes CMD.
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return unix.Exec(path, argv, os.Environ())
}
