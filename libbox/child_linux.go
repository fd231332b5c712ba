package libbox

// Spawn and Child: a program started in a sandbox that the caller talks to
// while it runs (stdio of the caller's choice, a PTY), signals, and waits
// for. A spawned program gets a fresh sandbox of its own, as Run's; Exec
// (persistent_linux.go) starts one in a persistent sandbox.
//
// Each spawned sandbox has a keeper: a goroutine locked to its OS thread
// from create to teardown, because init's parent-death signal fires when
// the thread that created it exits (sandbox_linux.go). It supervises the
// run (limits, the caller's context, Kill) whether or not the caller waits,
// and tears everything down when the program ends.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUndrained is returned by Wait when the program is blocked writing
// output that nobody reads: read Child.Stdout and Child.Stderr (in other
// goroutines) while waiting, or call WaitWithOutput.
var ErrUndrained = errors.New("the program's output is not being read")

// undrainedAfter is how long an output stream must have been full, with
// no read by the caller, for Wait to return ErrUndrained instead of
// waiting for a program that cannot go on.
const undrainedAfter = 2 * time.Second

// Child is a program started by Spawn or Exec.
type Child struct {
	// Stdin is the program's stdin when it is a Pipe or a PTY (keys typed
	// into the terminal), else nil. Close it to send end-of-file (on a
	// pipe). It is closed once the program has ended.
	Stdin io.WriteCloser
	// Stdout and Stderr are the program's output when they are Pipes
	// (Stdout: everything a PTY shows), else nil. While the program runs,
	// at most a pipe's worth is buffered: a caller that does not read
	// blocks the program, as a pipe would. Once the program has ended the
	// rest can still be read.
	Stdout io.ReadCloser
	Stderr io.ReadCloser

	cio   *childIO
	in    *instance // the program's: its pidfd is what Signal signals
	pid   int
	pidfd int

	done    chan struct{}
	res     *Result
	err     error
	waitMu  sync.Mutex
	waited  bool
	killReq chan struct{}
	killed  sync.Once
}

// Pid is the program's pid in the caller's pid namespace.
func (c *Child) Pid() int { return c.pid }

// Pidfd is a pidfd of the program (pidfd_open(2)): poll it for the exit,
// or signal it. It belongs to the Child and stays open until Wait (or
// WaitWithOutput) returns; do not close it.
func (c *Child) Pidfd() int { return c.pidfd }

// Signal sends sig to the program. A program that is its sandbox's pid 1
// (Spawn) gets only the signals it handles, and SIGKILL: the kernel's rule
// for the init of a pid namespace.
func (c *Child) Signal(sig os.Signal) error {
	s, ok := sig.(unix.Signal)
	if !ok {
		return fmt.Errorf("signal %v: not a unix signal", sig)
	}
	select {
	case <-c.done:
		return fmt.Errorf("signal %v: %w", sig, os.ErrProcessDone)
	default:
	}
	if err := unix.PidfdSendSignal(c.in.pidfd, s, nil, 0); err != nil {
		return fmt.Errorf("signal %v: %w", sig, err)
	}
	return nil
}

// Kill kills the program and everything it started: for a spawned program
// its whole sandbox, for an exec'd one the process and its descendants.
// The report says status cancelled; Kill on a program that has ended does
// nothing.
func (c *Child) Kill() error {
	c.killed.Do(func() { close(c.killReq) })
	return nil
}

// Wait waits for the program to end and returns its result (Stdout and
// Stderr stay empty: they are the caller's to read). It returns
// ErrUndrained, leaving the program running, when the program is blocked
// on output that nobody reads; the result with the context's error when
// the context given to Spawn or Exec ended (the program is killed).
func (c *Child) Wait() (*Result, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return c.result()
		case <-tick.C:
			if name := c.cio.stuck(undrainedAfter); name != "" {
				return nil, fmt.Errorf("wait: %w: %s has been full for %s; read it while waiting, or use WaitWithOutput", ErrUndrained, name, undrainedAfter)
			}
		}
	}
}

// WaitWithOutput reads Stdout and Stderr (what the caller has not read of
// them yet) concurrently until the program ends, and returns them in the
// result. At most Limits.Output bytes are kept (DefaultOutputCap without a
// limit), as Run keeps them.
func (c *Child) WaitWithOutput() (*Result, error) {
	limit := c.cio.keep
	var mu sync.Mutex
	var kept int64
	truncated := false
	var wg sync.WaitGroup
	drain := func(r io.Reader, dst *bytes.Buffer) {
		defer wg.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				mu.Lock()
				room := max(limit-kept, 0)
				take := min(int64(n), room)
				kept += take
				if take < int64(n) {
					truncated = true
				}
				dst.Write(buf[:take])
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}
	var stdout, stderr bytes.Buffer
	for _, p := range []struct {
		r   io.Reader
		dst *bytes.Buffer
	}{{c.Stdout, &stdout}, {c.Stderr, &stderr}} {
		if p.r != nil {
			wg.Add(1)
			go drain(p.r, p.dst)
		}
	}
	<-c.done
	wg.Wait()
	res, err := c.result()
	if res != nil {
		res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
		if truncated {
			res.OutputTruncated = true
			res.Report.OutputTruncated = true
		}
	}
	return res, err
}

// Report is the execution report once the program has ended, else nil.
func (c *Child) Report() *Report {
	select {
	case <-c.done:
		if c.res != nil {
			return c.res.Report
		}
	default:
	}
	return nil
}

// result is the ended child's result; the first call releases the pidfd.
func (c *Child) result() (*Result, error) {
	c.waitMu.Lock()
	if !c.waited {
		c.waited = true
		if c.pidfd >= 0 {
			unix.Close(c.pidfd)
		}
	}
	c.waitMu.Unlock()
	if c.res == nil {
		return nil, c.err
	}
	res := *c.res
	return &res, c.err
}

// finish records the result and lets Wait return.
func (c *Child) finish(res *Result, err error) {
	c.res, c.err = res, err
	c.cio.closeCaller()
	close(c.done)
}

// Spawn starts name with args in a fresh sandbox made from the sandbox's
// options, with the stdio asked for (see Stdio), and returns once the
// program runs. Cancelling ctx kills the sandbox, as Kill does. The program
// is supervised like Run's (wall time, CPU time, output limit); Wait or
// WaitWithOutput returns its result and report. Call one of them: the
// Child's pidfd is released then.
//
// The error is non-nil when the sandbox could not be set up or the program
// not started (errors.Is(err, ErrProgramNotFound)...); nothing is left.
func (s *Sandbox) Spawn(ctx context.Context, name string, args []string, stdio Stdio) (*Child, error) {
	if name == "" {
		return nil, errors.New("spawn: no program given")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cio, err := s.openChildIO(stdio)
	if err != nil {
		return nil, fmt.Errorf("spawn: %w", err)
	}
	c := newChild(cio)
	started := make(chan error, 1)
	go s.keepSpawned(ctx, append([]string{name}, args...), c, started)
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

func newChild(cio *childIO) *Child {
	c := &Child{cio: cio, pidfd: -1, done: make(chan struct{}), killReq: make(chan struct{})}
	c.Stdin, c.Stdout, c.Stderr = cio.callerStdin, cio.callerStdout, cio.callerStderr
	return c
}

// keepSpawned is the keeper of a spawned sandbox (see the top of the file).
func (s *Sandbox) keepSpawned(ctx context.Context, args []string, c *Child, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cio := c.cio
	rio := cio.runIO()
	in, err := s.create(args, &rio)
	cio.closeProgramEnds()
	if err == nil {
		err = cio.receiveMaster()
	}
	if err == nil {
		err = in.start()
	}
	if err == nil {
		c.pid = in.ctr.Pid()
		c.pidfd, err = unix.FcntlInt(uintptr(in.pidfd), unix.F_DUPFD_CLOEXEC, 3)
	}
	if err != nil {
		_ = in.destroy()
		cio.abort()
		started <- err
		return
	}
	c.in = in
	in.killReq = c.killReq
	cio.startStreams()
	started <- nil

	exit := in.supervise(ctx, cio.limit)
	// init is reaped: its pid namespace is gone, and the streams have no
	// writer left.
	cio.finishStreams()
	rep := in.collect(exit, cio.limit)
	cio.fillReport(rep)
	if err := in.destroy(); err != nil && rep.Error == "" {
		rep.Error = "teardown: " + err.Error()
	}
	res := &Result{ExitCode: rep.ExitCode, Signal: unix.Signal(rep.Signal), OutputTruncated: rep.OutputTruncated, Report: rep}
	var werr error
	if exit.reason == StatusCancelled && ctx.Err() != nil {
		werr = ctx.Err()
	}
	c.finish(res, werr)
}

// childIO is a child's stdio: the files the program gets, and the caller's
// ends.
type childIO struct {
	// What the program gets.
	stdin, stdout, stderr *os.File
	// ours are files of ours that the program has once it is started
	// (pipe ends, /dev/null): closed then.
	ours []*os.File
	// console is the socket init sends a PTY's master over; consolePeer
	// our end.
	console, consolePeer *os.File
	term                 *Terminal
	controllingTTY       bool

	// The caller's ends.
	callerStdin                io.WriteCloser
	callerStdout, callerStderr io.ReadCloser
	stdinPipe                  *os.File // ours to close once the program ended
	streams                    []*outStream
	stdoutStream               *outStream // set for a PTY, filled in by receiveMaster
	// limit counts the output against Limits.Output (nil without one);
	// keep is what WaitWithOutput keeps.
	limit *outputCap
	keep  int64
}

// openChildIO makes the files and pipes stdio asks for.
func (s *Sandbox) openChildIO(stdio Stdio) (_ *childIO, retErr error) {
	cio := &childIO{keep: DefaultOutputCap}
	if l := s.opts.Limits.Output; l != 0 {
		cio.limit = newOutputCap(l, true)
		cio.keep = l
	}
	defer func() {
		if retErr != nil {
			cio.abort()
		}
	}()
	var term *Terminal
	for _, st := range []Stream{stdio.Stdin, stdio.Stdout, stdio.Stderr} {
		if t, ok := st.(*Terminal); ok {
			if term != nil && t != term {
				return nil, errors.New("stdio: two different Terminals: a program has one")
			}
			term = t
		}
	}
	if term != nil {
		for i, st := range []Stream{stdio.Stdin, stdio.Stdout, stdio.Stderr} {
			if st != nil && st != Stream(term) {
				return nil, fmt.Errorf("stdio: %s is %v, but a PTY is the program's stdin, stdout and stderr together: leave it nil or give the same Terminal", stdioNames[i], st)
			}
		}
		if err := term.claim(); err != nil {
			return nil, err
		}
		return cio, cio.openTerminal(term)
	}

	in := stdio.Stdin
	if in == nil {
		in = Null
	}
	switch v := in.(type) {
	case StreamKind:
		switch v {
		case Null:
			f, err := os.Open(os.DevNull)
			if err != nil {
				return nil, fmt.Errorf("stdin: %w", err)
			}
			cio.stdin = cio.own(f)
		case Inherit:
			cio.stdin = os.Stdin
			if err := cio.readOnlyTerminal(); err != nil {
				return nil, err
			}
		case Pipe:
			r, w, err := os.Pipe()
			if err != nil {
				return nil, fmt.Errorf("stdin pipe: %w", err)
			}
			cio.stdin = cio.own(r)
			cio.stdinPipe = w
			cio.callerStdin = w
		default:
			return nil, fmt.Errorf("stdin: unknown stream %v", v)
		}
	case fileStream:
		if v.f == nil {
			return nil, errors.New("stdin: File(nil)")
		}
		cio.stdin = v.f
		if _, err := unix.IoctlGetTermios(int(v.f.Fd()), unix.TCGETS); err == nil {
			cio.controllingTTY = true
		}
		if err := cio.readOnlyTerminal(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("stdin: unknown stream %T", in)
	}
	for i, p := range []struct {
		st      Stream
		dst     **os.File
		caller  *io.ReadCloser
		inherit *os.File
	}{{stdio.Stdout, &cio.stdout, &cio.callerStdout, os.Stdout}, {stdio.Stderr, &cio.stderr, &cio.callerStderr, os.Stderr}} {
		name := stdioNames[i+1]
		st := p.st
		if st == nil {
			st = Pipe
		}
		var file *os.File
		switch v := st.(type) {
		case StreamKind:
			switch v {
			case Null:
				f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				*p.dst = cio.own(f)
				continue
			case Inherit:
				file = p.inherit
			case Pipe:
				r, w, err := os.Pipe()
				if err != nil {
					return nil, fmt.Errorf("%s pipe: %w", name, err)
				}
				*p.dst = cio.own(w)
				s := newOutStream(name, r, cio.limit, nil)
				cio.streams = append(cio.streams, s)
				*p.caller = s
				continue
			default:
				return nil, fmt.Errorf("%s: unknown stream %v", name, v)
			}
		case fileStream:
			if v.f == nil {
				return nil, fmt.Errorf("%s: File(nil)", name)
			}
			file = v.f
		default:
			return nil, fmt.Errorf("%s: unknown stream %T", name, st)
		}
		if cio.limit == nil {
			*p.dst = file
			continue
		}
		// An output limit: the runtime reads the output itself and
		// relays it to the file through the limit, as RunAttached does.
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("%s pipe: %w", name, err)
		}
		*p.dst = cio.own(w)
		cio.streams = append(cio.streams, newOutStream(name, r, cio.limit, file))
	}
	return cio, nil
}

var stdioNames = [3]string{"stdin", "stdout", "stderr"}

// readOnlyTerminal replaces a terminal as stdin, when the output is
// capped, by a read-only descriptor of it: a terminal is usually open for
// reading and writing, and the program could write to its stdin past the
// cap. (Other stdins are left as they are: a pipe's read end is read-only,
// and a file or socket the caller opened is the caller's choice.)
func (cio *childIO) readOnlyTerminal() error {
	if cio.limit == nil {
		return nil
	}
	fd := int(cio.stdin.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return nil
	}
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_ACCMODE == unix.O_RDONLY {
		return nil
	}
	f, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("stdin: reopen the terminal read-only, for the output limit: %w", err)
	}
	cio.stdin = cio.own(f)
	return nil
}

func (cio *childIO) own(f *os.File) *os.File {
	cio.ours = append(cio.ours, f)
	return f
}

// openTerminal sets a PTY up: init makes it in the sandbox's devpts and
// sends the master over a socketpair (Process.Terminal).
func (cio *childIO) openTerminal(t *Terminal) error {
	cio.term = t
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("console socketpair: %w", err)
	}
	cio.consolePeer = os.NewFile(uintptr(fds[0]), "console-peer")
	cio.console = cio.own(os.NewFile(uintptr(fds[1]), "console"))
	// What the program gets before init replaces it with the pty.
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("stdio: %w", err)
	}
	cio.stdin, cio.stdout, cio.stderr = cio.own(devnull), devnull, devnull
	cio.stdoutStream = newOutStream("stdout", nil, cio.limit, nil)
	cio.callerStdout = cio.stdoutStream
	cio.callerStdin = &ptyInput{}
	return nil
}

// receiveMaster takes the PTY's master from init, which sent it during
// set-up; the master is the caller's Stdout (read) and Stdin (written).
func (cio *childIO) receiveMaster() error {
	if cio.term == nil {
		return nil
	}
	fd, err := recvFd(cio.consolePeer)
	cio.consolePeer.Close()
	cio.consolePeer = nil
	if err != nil {
		return fmt.Errorf("receive the pty master: %w", err)
	}
	// Non-blocking, so that reads go through Go's poller (deadlines work).
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return fmt.Errorf("pty master: %w", err)
	}
	in, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		unix.Close(fd)
		return fmt.Errorf("pty master: %w", err)
	}
	master := os.NewFile(uintptr(fd), "pty-master")
	if err := cio.term.setMaster(os.NewFile(uintptr(in), "pty-master")); err != nil {
		master.Close()
		return err
	}
	cio.stdoutStream.src = master
	cio.streams = append(cio.streams, cio.stdoutStream)
	cio.callerStdin.(*ptyInput).t = cio.term
	return nil
}

// ptyInput writes keys to a Terminal's master.
type ptyInput struct{ t *Terminal }

func (p *ptyInput) Write(b []byte) (int, error) {
	p.t.mu.Lock()
	m := p.t.master
	p.t.mu.Unlock()
	if m == nil {
		return 0, os.ErrClosed
	}
	return m.Write(b)
}

// Close does nothing: a terminal's input ends with the program (type ^D,
// "\x04", for end-of-file in its canonical mode).
func (p *ptyInput) Close() error { return nil }

// recvFd receives one descriptor sent with SCM_RIGHTS.
func recvFd(sock *os.File) (int, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		_, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, err
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return -1, err
		}
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for _, extra := range fds[1:] {
				unix.Close(extra)
			}
			if len(fds) > 0 {
				return fds[0], nil
			}
		}
		return -1, errors.New("no descriptor in the message")
	}
}

// runIO is the stdio of create.
func (cio *childIO) runIO() runIO {
	return runIO{stdin: cio.stdin, stdoutFile: cio.stdout, stderrFile: cio.stderr, console: cio.console, term: cio.term, controllingTTY: cio.controllingTTY}
}

// closeProgramEnds closes our copies of what the program now has.
func (cio *childIO) closeProgramEnds() {
	for _, f := range cio.ours {
		f.Close()
	}
	cio.ours = nil
}

func (cio *childIO) startStreams() {
	for _, s := range cio.streams {
		s.start()
	}
}

// finishStreams ends the output streams once the program is gone.
func (cio *childIO) finishStreams() {
	for _, s := range cio.streams {
		s.finish()
	}
}

// stuck names a stream nobody drains (see outStream.stuck), or "".
func (cio *childIO) stuck(d time.Duration) string {
	for _, s := range cio.streams {
		if s.sink == nil && s.stuck(d) {
			return s.name
		}
	}
	return ""
}

// fillReport counts the output when no limit did.
func (cio *childIO) fillReport(rep *Report) {
	if cio.limit != nil {
		return
	}
	for _, s := range cio.streams {
		rep.OutputBytes += s.bytes()
	}
}

// closeCaller closes the caller's stdin pipe and terminal once the
// program has ended (as os/exec's Wait closes its pipes).
func (cio *childIO) closeCaller() {
	if cio.stdinPipe != nil {
		cio.stdinPipe.Close()
	}
	if cio.term != nil {
		cio.term.release()
	}
}

// abort closes everything of a child that never started.
func (cio *childIO) abort() {
	cio.closeProgramEnds()
	if cio.consolePeer != nil {
		cio.consolePeer.Close()
		cio.consolePeer = nil
	}
	for _, s := range cio.streams {
		if s.src != nil {
			s.src.Close()
		}
	}
	if cio.stdinPipe != nil {
		cio.stdinPipe.Close()
	}
	if cio.term != nil {
		cio.term.release()
	}
}
