package libbox

// The waiter: a pooled sandbox's init (a deferred init, deferred_linux.go)
// does not wait for its program in the Go runtime. Once it is ready, with
// its filters applied, it executes the runtime's binary again as the
// waiter, a C constructor (libbox/pause/waiter.c) that runs before the Go
// runtime would start: it sends the ready message, reads the start
// message, looks the program up and execs it. The execve of the program
// then tears down the waiter's small address space (one thread, the pages
// the loader and the constructor touched) instead of the Go runtime's
// (~10 MB, five threads to stop), which on this path was most of a pooled
// run's start; the Go init's teardown is done while the sandbox is made.
//
// The waiter changes nothing the program sees: it runs with the
// credentials, capabilities, no_new_privs, seccomp filter, rlimits, cwd,
// signal mask and dispositions init had, and the environment init would
// have passed; it keeps no descriptor open into the program (the fifo, its
// memfd and the binary are close-on-exec). Because no_new_privs is set and
// the binary has no file capabilities, its execve changes no credential
// (nor the parent-death signal, which a change of credentials clears), and
// the program's execve then does what it did from init. It runs only
// where that holds, and only with the built-in filters (which allow its
// system calls: it uses none that init does not) and without Landlock
// (which would refuse the execution of the runtime's binary); anywhere
// else, and whenever its execve fails, init waits as before.
//
// The waiter handles the plain case only: the start message as
// encodeStartMessage makes it, a program found by lookPath's own checks
// in a path that needs no cleaning. For anything else (a program not
// found or not executable, a relative PATH entry, an execve that fails) it
// writes what it read from the fifo into a memfd and executes the binary
// once more as the resume (resumeInit), which is init's own Go code from
// waitForStart on: the error it reports is init's, word for word.

import (
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

const (
	// waiterArgv0 and resumeArgv0 name the waiter and the resume; keep
	// them in sync with libbox/pause/waiter.c.
	waiterArgv0 = "nanobox-waiter"
	resumeArgv0 = "nanobox-resume"
)

// exeWithoutFileCaps reports whether the runtime's binary has no file
// capabilities, whose execve would clear the ambient set.
func exeWithoutFileCaps() bool {
	_, err := unix.Getxattr("/proc/self/exe", "security.capability", nil)
	return err == unix.ENODATA
}

// waiterAllowed reports whether init may hand over to the waiter: only
// once its filters are applied, under no_new_privs, and when they let the
// waiter make itself non-dumpable again as init is.
func waiterAllowed() bool {
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	return err == nil && nnp == 1 && unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) == nil
}

// execWaiter executes the waiter; it returns only when it could not, with
// every descriptor as it was.
func execWaiter(sock *syncSocket, fifoFd, exeFd int, cwd string, env []string) error {
	// In hex: the codec's bytes include NUL, which argv cannot carry.
	ready := hex.EncodeToString(encodeSyncMsg(&syncMsg{Type: syncReady}))
	mem, err := unix.MemfdCreate("nanobox-start", unix.MFD_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(mem)
	sockFd := int(sock.f.Fd())
	fds := []int{fifoFd, mem, exeFd, sockFd}
	args := []string{waiterArgv0, strconv.Itoa(fifoFd), strconv.Itoa(mem), strconv.Itoa(exeFd), strconv.Itoa(sockFd), cwd, ready}
	for _, fd := range fds {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			cloexec(fds)
			return err
		}
	}
	err = execveatEmpty(exeFd, args, env)
	cloexec(fds)
	return err
}

func cloexec(fds []int) {
	for _, fd := range fds {
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
	}
}

// resumeInit is init from waitForStart on, in the process the waiter gave
// up (argv as the waiter's: fifo fd, memfd, binary's fd, sync fd, cwd,
// ready message; the environment is the program's). It never returns.
func resumeInit() {
	fifoFd, err1 := strconv.Atoi(os.Args[1])
	mem, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil {
		os.Exit(1)
	}
	cwd := os.Args[5]
	cloexec([]int{fifoFd, mem})
	_ = setDumpable(false)
	var read []byte
	var st unix.Stat_t
	if err := unix.Fstat(mem, &st); err == nil && st.Size > 0 {
		read = make([]byte, st.Size)
		if _, err := unix.Pread(mem, read, 0); err != nil {
			reportStartFailure(fifoFd, err)
			os.Exit(1)
		}
	}
	_ = unix.Close(mem)
	start, err := waitForStart(io.MultiReader(bytes.NewReader(read), fifoReader(fifoFd)), true)
	if err != nil {
		// As init: the parent is gone.
		os.Exit(1)
	}
	pe := &pendingExec{exeFd: -1, env: os.Environ()}
	err = pe.setProgram(start, false, -1, cwd)
	if err == nil {
		err = pe.run(nil, nil, nil)
	}
	reportStartFailure(fifoFd, err)
	os.Exit(1)
}
