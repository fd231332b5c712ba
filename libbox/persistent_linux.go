package libbox

// A persistent sandbox: Start keeps one sandbox alive (its namespaces,
// mounts, cgroup and network), Exec runs programs in it, one after another
// or at once, each supervised and reported on its own, and Close tears it
// all down. It is the same container as a Run's, created with no program
// (deferred_linux.go) and started with the pause as pid 1; every Exec is
// Container.Exec into it, as `nanobox-runc exec` does.
//
// Limits in a persistent sandbox: memory, CPUs and pids (the cgroup) hold
// for the sandbox as a whole; wall time and output hold for each Exec; CPU
// time holds for each process (RLIMIT_CPU), and the cgroup's total is in
// the sandbox's report (Report, after Close).
//
// An exec'd program is a child subreaper: whatever it starts stays among
// its descendants while it runs, so that Kill (and a limit) can end the
// whole tree. What it leaves running when it exits goes on in the sandbox
// until Close (a server started in the background, say), reparented to the
// pause.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNotStarted is returned by Exec and Mount on a sandbox without Start,
// or after Close.
var ErrNotStarted = errors.New("the sandbox is not started: call Start first")

// session is a started persistent sandbox.
type session struct {
	in      *instance
	stop    chan struct{}
	stopped sync.Once
	// ended is closed when the keeper has torn the sandbox down; report
	// and err are then set.
	ended  chan struct{}
	report *Report
	err    error

	mu     sync.Mutex
	closed bool
	execs  sync.WaitGroup
	// cpu and the rest add up the exec'd programs, for a sandbox without
	// a cgroup to measure it as a whole.
	cpu    cpuSample
	peak   int64
	vcsw   int64
	ivcsw  int64
	output int64
	nexec  int
}

// Start creates the sandbox's persistent instance and returns once it
// runs: Exec then runs programs in it, Mount adds mounts to it, and Close
// ends it. When ctx ends, the sandbox is killed (Close must still be
// called). A Sandbox has one persistent instance at a time; Run and Spawn
// keep making fresh sandboxes of their own beside it.
func (s *Sandbox) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	if s.live != nil {
		return errors.New("start: the sandbox is already started: Close it first")
	}
	ses := &session{stop: make(chan struct{}), ended: make(chan struct{})}
	ready := make(chan error, 1)
	go s.keepSession(ctx, ses, ready)
	if err := <-ready; err != nil {
		return err
	}
	s.live = ses
	s.final = nil
	return nil
}

// keepSession is the keeper of a persistent sandbox: it creates it, runs
// the pause, waits for the end (Close, ctx, or the sandbox dying: an OOM
// kill of the pause, say) and tears it down.
func (s *Sandbox) keepSession(ctx context.Context, ses *session, ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(ses.ended)
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		ready <- fmt.Errorf("start: %w", err)
		return
	}
	rio := runIO{stdin: devnull, stdoutFile: devnull, stderrFile: devnull, pause: true}
	in, err := s.create(nil, &rio)
	devnull.Close()
	if err == nil {
		err = in.start()
	}
	if err != nil {
		_ = in.destroy()
		ready <- fmt.Errorf("start: %w", err)
		return
	}
	ses.in = in
	ready <- nil

	e := ses.wait(ctx)
	// The pid namespace is gone with the pause: every exec'd program is
	// dead; their supervisors reap them.
	ses.execs.Wait()
	ses.report = ses.collect(e)
	ses.err = in.destroy()
	if ses.err != nil && ses.report.Error == "" {
		ses.report.Error = "teardown: " + ses.err.Error()
	}
}

// startProgram is start for a deferred init: it costs as little as it
// can (the warm pool's whole run is this, the program and its end). The
// CPU init used is measured beforehand by measureInit: while it waits
// there is nothing to add.
func (in *instance) startProgram(args []string) error {
	if err := in.ctr.startProgram(args); err != nil {
		var w *WarningError
		if !errors.As(err, &w) {
			return err
		}
	}
	in.started = time.Now()
	return nil
}

// measureInit takes the CPU a waiting init has used, for the report to
// leave out, off the start's path.
func (in *instance) measureInit() {
	in.initCPU = procCPU(in.ctr.Pid())
	if in.cg != nil {
		in.initCgroupCPU = cgroupCPU(in.cg)
	}
}

// wait waits for the pause to end, killing the sandbox at Close or when
// ctx ends.
func (ses *session) wait(ctx context.Context) exitInfo {
	pid := ses.in.ctr.Pid()
	done := make(chan exitInfo, 1)
	go func() {
		var e exitInfo
		for {
			_, err := unix.Wait4(pid, &e.ws, 0, &e.ru)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			e.end, e.err = time.Now(), err
			done <- e
			return
		}
	}()
	var reason RunStatus
	var detail string
	ctxDone := ctx.Done()
	for {
		select {
		case e := <-done:
			e.reason, e.detail = reason, detail
			return e
		case <-ses.stop:
			ses.in.kill()
			if reason == "" {
				reason = statusClosed
			}
		case <-ctxDone:
			ctxDone = nil
			ses.in.kill()
			if reason == "" {
				reason, detail = StatusCancelled, "killed: "+ctx.Err().Error()
			}
		}
	}
}

// statusClosed marks a session ended by Close: its report says ok.
const statusClosed RunStatus = "closed"

// collect is the sandbox's own report: the cgroup's totals when it has
// one, else the sum of its programs'.
func (ses *session) collect(e exitInfo) *Report {
	closed := e.reason == statusClosed
	if closed {
		e.reason = ""
	}
	rep := ses.in.collect(e, nil)
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if rep.CPUSource != "cgroup" {
		cpu := cpuSample{user: rep.CPUUser, system: rep.CPUSystem}
		rep.CPUUser, rep.CPUSystem = cpu.user+ses.cpu.user, cpu.system+ses.cpu.system
		rep.VoluntaryContextSwitches += ses.vcsw
		rep.InvoluntaryContextSwitches += ses.ivcsw
		if rep.PeakMemorySource == peakRusage {
			rep.PeakMemory = max(rep.PeakMemory, ses.peak)
		}
	}
	rep.OutputBytes = ses.output
	if closed && e.err == nil && rep.Status != StatusOOM {
		rep.Status, rep.ExitCode, rep.Signal, rep.SignalName, rep.Killed = StatusOK, 0, 0, "", false
	}
	// Wall time, CPU and memory, per program: not the limits of the
	// sandbox as a whole.
	for _, n := range []LimitName{LimitWallTime, LimitOutput} {
		if l, ok := rep.Limits[n]; ok {
			l.Hit = false
			rep.Limits[n] = l
		}
	}
	return rep
}

// Close ends the persistent sandbox: every program in it is killed, and
// its cgroup, mounts and state removed. Report then has its totals. Close
// on a sandbox that is not started does nothing.
func (s *Sandbox) Close() error {
	s.liveMu.Lock()
	ses := s.live
	s.live = nil
	s.liveMu.Unlock()
	if ses == nil {
		return nil
	}
	ses.mu.Lock()
	ses.closed = true
	ses.mu.Unlock()
	ses.stopped.Do(func() { close(ses.stop) })
	<-ses.ended
	s.liveMu.Lock()
	s.final = ses.report
	s.liveMu.Unlock()
	if ses.err != nil {
		return fmt.Errorf("close sandbox: %w", ses.err)
	}
	return nil
}

// Report is the persistent sandbox's report once Close returned: wall time
// since Start, the CPU time and peak memory of the whole sandbox (from its
// cgroup; without one, the sum of the programs' and the largest), the
// output of every program, and every limit. Nil before.
func (s *Sandbox) Report() *Report {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	return s.final
}

// ID is the persistent sandbox's id (its container's), "" when it is not
// started.
func (s *Sandbox) ID() string {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	if s.live == nil {
		return ""
	}
	return s.live.in.id
}

func (s *Sandbox) session() (*session, error) {
	s.liveMu.Lock()
	ses := s.live
	s.liveMu.Unlock()
	if ses == nil {
		return nil, ErrNotStarted
	}
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if ses.closed {
		return nil, ErrNotStarted
	}
	select {
	case <-ses.ended:
		return nil, fmt.Errorf("the sandbox %s has ended: %w", ses.in.id, ErrNotRunning)
	default:
	}
	return ses, nil
}

// Exec runs name with args in the persistent sandbox, with the stdio asked
// for, and returns once it runs. It is supervised on its own: the wall
// time and output limits, ctx (cancelling it kills the program and what it
// started), Kill; Wait gives its report (CPU and memory from its rusage:
// the program and the children it waited for).
func (s *Sandbox) Exec(ctx context.Context, name string, args []string, stdio Stdio) (*Child, error) {
	if name == "" {
		return nil, errors.New("exec: no program given")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ses, err := s.session()
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	cio, err := s.openChildIO(stdio)
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	c := newChild(cio)
	p := ses.in.ctr.Config().Process
	p.Args = append([]string{name}, args...)
	p.Terminal = cio.term != nil
	if p.Terminal {
		rows, cols := cio.term.Size()
		p.ConsoleHeight, p.ConsoleWidth = uint(rows), uint(cols)
	}
	opts := ExecOpts{
		Stdin: cio.stdin, Stdout: cio.stdout, Stderr: cio.stderr,
		ControllingTTY: cio.controllingTTY, NewSession: true, Subreaper: true,
	}
	if cio.term != nil {
		opts.ConsoleSocket = cio.console
	}
	// The OOM kills so far, before the program can allocate anything.
	var oomBase uint64
	if ses.in.cg != nil {
		oomBase, _ = ses.in.cg.oomKills()
	}
	ses.execs.Add(1)
	pid, err := ses.in.ctr.Exec(&p, opts)
	cio.closeProgramEnds()
	if err == nil {
		err = cio.receiveMaster()
	}
	var pidfd int
	if err == nil {
		// Our own child, not yet reaped: the pid is its own.
		pidfd, err = unix.PidfdOpen(pid, 0)
	}
	if err != nil {
		if pid > 0 {
			_ = unix.Kill(pid, unix.SIGKILL)
			_, _ = unix.Wait4(pid, nil, 0, nil)
		}
		cio.abort()
		ses.execs.Done()
		return nil, fmt.Errorf("exec in sandbox %s: %w", ses.in.id, err)
	}
	ex := &instance{sb: s, id: ses.in.id, ctr: ses.in.ctr, pidfd: pidfd, execPid: pid, started: time.Now(), killReq: c.killReq}
	ex.initCPU = procCPU(pid)
	if ex.pollsTree() {
		ex.initTreeCPU, ex.treeStart = treeCPU(pid, 0)
	}
	ex.execCgroup, ex.execOOMBase = ses.in.cg, oomBase
	ex.killFn = func() { killTree(pid, pidfd) }
	c.pid = pid
	if c.pidfd, err = unix.FcntlInt(uintptr(pidfd), unix.F_DUPFD_CLOEXEC, 3); err != nil {
		c.pidfd = -1
	}
	c.in = ex
	cio.startStreams()
	go ses.superviseExec(ctx, ex, c)
	return c, nil
}

func (ses *session) superviseExec(ctx context.Context, ex *instance, c *Child) {
	defer ses.execs.Done()
	cio := c.cio
	exit := ex.supervise(ctx, cio.limit)
	cio.finishStreams()
	rep := ex.collect(exit, cio.limit)
	cio.fillReport(rep)
	if l, ok := rep.Limits[LimitCPUTime]; ok && ex.sb.plan.cgroupCPUPoll {
		// The cgroup's CPU time is the whole sandbox's; a program is held
		// by RLIMIT_CPU and its own tree's total.
		l.Mechanism = "RLIMIT_CPU per process, and the program's process tree polled from /proc (the cgroup's total is the whole sandbox's)"
		rep.Limits[LimitCPUTime] = l
	}
	unix.Close(ex.pidfd)
	ses.mu.Lock()
	ses.nexec++
	ses.cpu.user += rep.CPUUser
	ses.cpu.system += rep.CPUSystem
	ses.peak = max(ses.peak, rep.PeakMemory)
	ses.vcsw += rep.VoluntaryContextSwitches
	ses.ivcsw += rep.InvoluntaryContextSwitches
	ses.output += rep.OutputBytes
	ses.mu.Unlock()
	res := &Result{ExitCode: rep.ExitCode, Signal: unix.Signal(rep.Signal), OutputTruncated: rep.OutputTruncated, Report: rep}
	var err error
	if exit.reason == StatusCancelled && ctx.Err() != nil {
		err = ctx.Err()
	}
	c.finish(res, err)
}

// killTree kills leader, a child subreaper, and every descendant of it.
// They are stopped first, walk after walk until a walk finds no new one:
// a stopped process cannot fork, and while the leader lives an orphan of
// the tree is reparented to it, so nothing can leave the tree before it is
// killed. Each process is signalled through a pidfd opened while its
// parent is known to be in the tree: never a recycled pid.
func killTree(leader, leaderFd int) {
	type member struct{ fd int }
	tree := map[int]member{leader: {fd: -1}}
	defer func() {
		for _, m := range tree {
			if m.fd >= 0 {
				unix.Close(m.fd)
			}
		}
	}()
	_ = unix.PidfdSendSignal(leaderFd, unix.SIGSTOP, nil, 0)
	for range 1000 {
		found := false
		for parent := range tree {
			for _, pid := range childrenOf(parent) {
				if _, ok := tree[pid]; ok {
					continue
				}
				fd, err := unix.PidfdOpen(pid, 0)
				if err != nil {
					continue
				}
				if ps, err := readProcStat(pid); err != nil || ps.Ppid != parent {
					// Gone, or the pid is another process's by now.
					unix.Close(fd)
					continue
				}
				_ = unix.PidfdSendSignal(fd, unix.SIGSTOP, nil, 0)
				tree[pid] = member{fd: fd}
				found = true
			}
		}
		if !found {
			break
		}
	}
	for pid, m := range tree {
		if pid != leader {
			_ = unix.PidfdSendSignal(m.fd, unix.SIGKILL, nil, 0)
		}
	}
	_ = unix.PidfdSendSignal(leaderFd, unix.SIGKILL, nil, 0)
}

// childrenOf lists pid's children, from every thread's children file.
func childrenOf(pid int) []int {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
