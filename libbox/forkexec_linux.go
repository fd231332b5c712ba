package libbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// procHandle is a child started by forkExec: its pid and a pidfd of it.
// It is what the runtime keeps of the nsenter stage, in place of an
// *os.Process: the first os.StartProcess of a Go program checks that
// pidfds work by forking and reaping a throwaway child (os.checkPidfd),
// a process start on the path of every container's create.
type procHandle struct {
	Pid   int
	pidfd int
}

// forkExec starts argv[0] at path with env and files (fd i in the child is
// files[i]), the way os.StartProcess does, with sys's attributes and a
// pidfd (sys.PidFD is set here).
func forkExec(path string, argv, env []string, files []*os.File, sys *syscall.SysProcAttr) (*procHandle, error) {
	fds := make([]uintptr, len(files))
	for i, f := range files {
		fds[i] = f.Fd()
	}
	pidfd := -1
	sys.PidFD = &pidfd
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: fds, Sys: sys})
	runtime.KeepAlive(files)
	if err != nil {
		return nil, &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	if pidfd < 0 {
		// The kernel made the child but no pidfd (it cannot happen on
		// the kernels that have clone3, which this runtime needs).
		_ = unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
		return nil, fmt.Errorf("fork/exec %s: no pidfd for pid %d", path, pid)
	}
	return &procHandle{Pid: pid, pidfd: pidfd}, nil
}

// Wait reaps the child and closes the pidfd. Call it once.
func (p *procHandle) Wait() error {
	var info unix.Siginfo
	var err error
	for {
		err = unix.Waitid(unix.P_PIDFD, p.pidfd, &info, unix.WEXITED, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	unix.Close(p.pidfd)
	p.pidfd = -1
	if err != nil {
		return fmt.Errorf("wait for pid %d: %w", p.Pid, err)
	}
	return nil
}

// Kill sends SIGKILL through the pidfd: never to another process that
// reused the pid.
func (p *procHandle) Kill() error {
	if p.pidfd < 0 {
		return errors.New("process already reaped")
	}
	return unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
}
