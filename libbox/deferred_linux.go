package libbox

// A deferred init: a container whose Config has no program (empty
// Process.Args) is created like any other, namespaces, mounts, cgroup,
// credentials and filters ready, and its init waits on the exec fifo as
// usual; the program comes with start, in a start message written into the
// fifo instead of the start byte. One path with Create and Start: the
// difference is what start writes and when lookPath runs. The warm pool
// (pool_linux.go) creates its sandboxes this way, so that a run costs only
// the start; a persistent sandbox (persistent_linux.go) is made with no
// program and the pause as its init's (CreateOpts.pause), started with the
// plain start byte.
//
// A deferred init applies its filters (Landlock, then seccomp) as soon as it
// is ready, before it waits (CreateOpts.earlyFilters): loading a seccomp
// filter is most of a start's cost otherwise (the kernel checks and
// compiles it; on a pooled run of /bin/true here the median went from
// about 9 ms to about 4 ms on a loaded host). A sandbox's init with its
// program does the same: the load (about 1 ms for the default profile
// here) then overlaps the runtime's writing the state and starting it. What
// it does after that is what the built-in profiles allow: read the fifo,
// look the program up (stat, faccessat), execve, or write an error into
// the fifo, and whatever the Go runtime does meanwhile (a thread, a GC). Only a sandbox with a
// built-in profile asks for it: a caller's profile may deny clone or
// setrlimit, and is applied right before execve as for every other
// container. Nor does an init with RLIMIT_AS to set (a degraded memory
// limit): that limit is set before the filters, and as late as it can be.
//
// The fifo then carries, from `start` to init:
//
//	'1'                              the start byte (a container with a program)
//	'2' <uint32 length> <arguments>  a startMessage (a deferred init)
//
// and back, once init is gone, what it left there when it failed after the
// start (init_linux.go), with the kind of a program error marked so that
// errors.Is(err, ErrProgramNotFound) holds for the caller of start too.
//
// The pause is pid 1 of a persistent sandbox: this binary again, executed
// by init (under the sandbox's seccomp filter, with no capabilities and as
// the sandbox's user) with the environment variable pauseEnv set, which a
// C constructor (libbox/pause) catches before the Go runtime starts: it
// reaps orphans and waits for SIGTERM from outside the sandbox, and runs
// nothing else. It is not confined by Landlock, which would refuse the
// execution of the runtime's binary (outside every rule); the programs
// started in the sandbox are.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	// The pause's constructor.
	_ "github.com/nanobox-sandbox/nanobox-runc/libbox/pause"
)

const (
	// startByte starts a container that has its program.
	startByte = '1'
	// startWithProgram starts a deferred init: a startMessage follows.
	startWithProgram = '2'
	// maxStartMessage bounds a start message (a program's arguments).
	maxStartMessage = 8 << 20
	// startErrorKindMark frames the kind of a start error in the fifo.
	startErrorKindMark = "\x00"
	// pauseEnv is the pause's whole environment; libbox/pause looks for it.
	pauseEnv = "_NANOBOX_PAUSE=1"
	// pauseArgv0 is the pause's name in ps.
	pauseArgv0 = "nanobox-pause"
)

// startMessage is the program of a deferred init.
type startMessage struct {
	Args []string
}

// encodeStartMessage frames m for the fifo: startWithProgram, the length
// of the rest (uint32), the number of arguments (uint32), and each
// argument as its length (uint32) and its bytes, all big-endian; a form
// the pooled sandbox's waiter (libbox/pause/waiter.c) reads without a
// parser.
func encodeStartMessage(m startMessage) ([]byte, error) {
	n := 4
	for _, a := range m.Args {
		n += 4 + len(a)
	}
	if n > maxStartMessage {
		return nil, fmt.Errorf("the program's arguments take %d bytes, over the limit of %d", n, maxStartMessage)
	}
	out := make([]byte, 9, 5+n)
	out[0] = startWithProgram
	binary.BigEndian.PutUint32(out[1:5], uint32(n))
	binary.BigEndian.PutUint32(out[5:9], uint32(len(m.Args)))
	for _, a := range m.Args {
		out = binary.BigEndian.AppendUint32(out, uint32(len(a)))
		out = append(out, a...)
	}
	return out, nil
}

// readStartMessage reads the rest of a start message, after its first
// byte.
func readStartMessage(r io.Reader) (*startMessage, error) {
	var size [4]byte
	if err := readFull(r, size[:]); err != nil {
		return nil, fmt.Errorf("read start message: %w", err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxStartMessage {
		return nil, fmt.Errorf("read start message: %d bytes, over the limit of %d", n, maxStartMessage)
	}
	b := make([]byte, n)
	if err := readFull(r, b); err != nil {
		return nil, fmt.Errorf("read start message: %w", err)
	}
	m, err := decodeStartMessage(b)
	if err != nil {
		return nil, fmt.Errorf("decode start message: %w", err)
	}
	return m, nil
}

func decodeStartMessage(b []byte) (*startMessage, error) {
	if len(b) < 4 {
		return nil, errors.New("no argument count")
	}
	count := binary.BigEndian.Uint32(b)
	b = b[4:]
	if uint64(count) > uint64(len(b)/4) {
		return nil, fmt.Errorf("%d arguments in %d bytes", count, len(b))
	}
	m := &startMessage{Args: make([]string, count)}
	for i := range m.Args {
		if len(b) < 4 {
			return nil, fmt.Errorf("argument %d: no length", i)
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, fmt.Errorf("argument %d: %d bytes, %d left", i, n, len(b))
		}
		m.Args[i], b = string(b[:n]), b[n:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the arguments", len(b))
	}
	return m, nil
}

// fifoReader reads a file descriptor, retrying on EINTR.
type fifoReader int

func (fd fifoReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(fd), b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(b) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func readFull(r io.Reader, b []byte) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("unexpected end of the fifo")
		}
		return err
	}
	return nil
}

// writeFifo writes all of b into the non-blocking fifo fd, waiting for room
// when a long start message fills the pipe.
func writeFifo(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
				return err
			}
			continue
		case err != nil:
			return err
		}
		b = b[n:]
	}
	return nil
}

// parseStartError is the error text init left in the fifo, with the kind
// of a program error restored.
func parseStartError(s string) error {
	if rest, ok := strings.CutPrefix(s, startErrorKindMark); ok {
		if kind, msg, ok := strings.Cut(rest, startErrorKindMark); ok {
			if k, known := errorKinds[kind]; known {
				return &kindError{msg: msg, kind: k}
			}
			return errors.New(msg)
		}
	}
	return errors.New(s)
}

// startProgram starts a deferred init with args as its program; it
// returns once the program was executed, as Start. c must be the handle
// Create returned: its state is not read again (no other command starts a
// deferred init).
func (c *Container) startProgram(args []string) error {
	if len(c.st.Config.Process.Args) != 0 {
		return fmt.Errorf("container %s has its program (%s): start it with Start", c.st.ID, c.st.Config.Process.Args[0])
	}
	b, err := encodeStartMessage(startMessage{Args: args})
	if err != nil {
		return fmt.Errorf("container %s: %w", c.st.ID, err)
	}
	return c.startWith(b, false)
}

// setProgram gives a deferred init's pending process its program: the
// pause, or the start message's, with lookPath now, as the process's own
// user, in its cwd.
func (pe *pendingExec) setProgram(m *startMessage, pause bool, exeFd int, cwd string) error {
	if pause {
		if pe.filters != nil {
			pe.filters.close()
		}
		pe.exeFd, pe.args, pe.env = exeFd, []string{pauseArgv0}, []string{pauseEnv}
		return nil
	}
	_ = unix.Close(exeFd)
	if m == nil {
		return errors.New("start: this container was made without a program, and none was given")
	}
	if len(m.Args) == 0 || m.Args[0] == "" {
		return errors.New("start: no program given")
	}
	path, err := lookPath(m.Args[0], pe.env, cwd)
	if err != nil {
		return err
	}
	pe.path, pe.args = path, m.Args
	return nil
}

// execFd executes the file open at fd (execveat AT_EMPTY_PATH): the pause,
// from the runtime's sealed binary, which nothing in the sandbox can reach
// by a path. It returns only on failure.
func execFd(fd int, args, env []string) error {
	err := execveatEmpty(fd, args, env)
	return fmt.Errorf("exec the sandbox's pause: %w (the seccomp profile must allow execveat)", err)
}

// execveatEmpty is execveat(fd, "", args, env, AT_EMPTY_PATH); it returns
// only on failure.
func execveatEmpty(fd int, args, env []string) error {
	argv, err := syscall.SlicePtrFromStrings(args)
	if err != nil {
		return err
	}
	envv, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	empty, err := syscall.BytePtrFromString("")
	if err != nil {
		return err
	}
	_, _, errno := unix.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])), unix.AT_EMPTY_PATH, 0)
	return errno
}

// enterSession puts init or an exec'd process in the session it asked
// for: stdin, a terminal the caller passed in, as the controlling terminal
// of a new session (controllingTTY); or a new session without a terminal
// (newSession, ExecOpts.NewSession), unless a console is coming
// (consoleFd >= 0: setupConsole makes the session, around the PTY);
// otherwise the caller's. The CLI always asks for a session (runc's nsexec
// calls setsid for init and every exec'd process); an embedder may keep
// its own.
func enterSession(controllingTTY, newSession bool, consoleFd int) error {
	switch {
	case controllingTTY:
		return takeControllingTTY()
	case newSession && consoleFd < 0:
		if _, err := unix.Setsid(); err != nil {
			return fmt.Errorf("setsid: %w", err)
		}
	}
	return nil
}

// takeControllingTTY makes stdin, a terminal the caller passed in, the
// controlling terminal of a new session led by this process.
func takeControllingTTY() error {
	if _, err := unix.Setsid(); err != nil {
		return fmt.Errorf("setsid: %w", err)
	}
	if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, 0); err != nil {
		return fmt.Errorf("make stdin the controlling terminal: %w (it must be a terminal, and no other session's controlling terminal)", err)
	}
	return nil
}
