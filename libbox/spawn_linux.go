package libbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// The parent side of starting a process in a container, shared by create
// (the container's init) and exec: the runtime binary is re-executed as
// "nanobox-runc init" with a prepared fd table; its nsenter stage (C, before
// the Go runtime) joins and creates the namespaces, forks the process that
// becomes init or the exec'd program, reports its pid and exits. What the
// forked process does next (syncConfig or syncExec) is up to the caller.

// spawnSpec is the child's fd table and what its nsenter stage must do.
type spawnSpec struct {
	// files is the child's fd table: stdio, the extra files, then what add
	// appended.
	files []*os.File
	// exe is the sealed runtime binary the child is executed from.
	exe *os.File
	// clone and joins are the namespaces the nsenter stage creates and
	// joins (see nsenter.BootstrapMessage).
	clone uintptr
	joins []nsenter.Join
	// offsets are the clock offsets of a new time namespace.
	offsets []nsenter.TimeOffset
	// oomScoreAdj, when not nil, is set by the stage before it joins or
	// makes any namespace (nsenter.Bootstrap.OOMScoreAdj).
	oomScoreAdj *int
	// affinity pins the stage while it starts (exec's execCPUAffinity).
	affinity *CPUAffinity
	// ownAffinity: the stage (and so the process it forks) does not keep
	// the runtime's CPU affinity, but may run on every CPU its cpuset
	// allows, unless affinity pins it (see resetAffinity). For the
	// container's processes, not for the runtime's helpers.
	ownAffinity bool
	// usermap writes the id maps of the stage's new user namespace when
	// the stage asks for them; nil refuses the request.
	usermap func(stagePid int) error
	// log receives what the forked process logs (syncLog).
	log Logger
	// cgroup, when not nil, is a cgroup v2 directory to start the stage
	// in (clone3 CLONE_INTO_CGROUP): the process it forks is born there.
	// When clone3 cannot do it (an older kernel, or a seccomp filter
	// around the runtime that refuses clone3), the stage starts where the
	// runtime is, and spawned.inCgroup says which happened.
	cgroup *os.File
	// cgroupTasks are cgroup v1 tasks files for the stage to join before
	// it does anything else (nsenter's cgroupfd): the process it forks is
	// born in those cgroups.
	cgroupTasks []nsenterCgroup
	// lateCgroup, when not nil, makes the container's cgroup while the
	// stage starts and makes the namespaces (nsenter's latecgroups): start
	// calls it on a goroutine of its own, and sends the stage the
	// cgroup2 directory and v1 tasks files it returns (to clone init into
	// and to join before forking it); they stay the caller's to close.
	// cgroup and cgroupTasks are then unset. Only where lateCgroupOK: the
	// stage joins the cgroups after the namespaces, and must still be the
	// runtime's host user then.
	lateCgroup func() (dir *os.File, tasks []nsenterCgroup, err error)
	// hugePages lets the child's Go heap have transparent huge pages
	// (Config.InitHugePages: NANOBOX_THP=1 in its environment); otherwise
	// its GODEBUG has disablethp=1.
	hugePages bool
}

// newSpawnSpec starts an fd table: 0, 1, 2 are stdin, stdout and stderr
// (nil: the caller's own), 3 onwards the extra files (the preserved fds).
func newSpawnSpec(stdin, stdout, stderr *os.File, extra []*os.File) *spawnSpec {
	s := &spawnSpec{files: []*os.File{stdio(stdin, os.Stdin), stdio(stdout, os.Stdout), stdio(stderr, os.Stderr)}}
	s.files = append(s.files, extra...)
	return s
}

func stdio(f, def *os.File) *os.File {
	if f != nil {
		return f
	}
	return def
}

// add appends f to the child's fd table and returns its fd number there.
func (s *spawnSpec) add(f *os.File) int {
	s.files = append(s.files, f)
	return len(s.files) - 1
}

// spawned is a started child: the nsenter stage (until it is reaped) and
// the process it forked.
type spawned struct {
	sock  *syncSocket
	stage *procHandle
	// exeFd is the sealed binary's fd number in the child, for it to close.
	exeFd int
	// pid is the forked process in the runtime's pid namespace, a child of
	// the caller (the stage forks it with CLONE_PARENT), and startTime its
	// start time, so that it is never confused with a recycled pid.
	pid       int
	startTime uint64
	log       Logger
	// inCgroup: the forked process was born in the container's cgroup,
	// every hierarchy of it (spawnSpec.cgroup and cgroupTasks).
	inCgroup bool
}

// start runs the child and reads the stage's replies up to the forked
// process's pid. On error nothing is left: the stage and the forked
// process are killed and reaped.
func (s *spawnSpec) start() (_ *spawned, retErr error) {
	// The cgroup is made on another thread from here on, while this one
	// starts the stage (blocked in vfork until the stage has exec'd) and
	// the stage makes the namespaces; start returns only once it is done,
	// so that the caller has it, to use or to destroy.
	var late chan lateCgroupResult
	if s.lateCgroup != nil {
		late = make(chan lateCgroupResult, 1)
		go func() {
			var r lateCgroupResult
			r.dir, r.tasks, r.err = s.lateCgroup()
			late <- r
		}()
		defer func() {
			if late != nil {
				<-late
			}
		}()
	}
	parentSock, childSock, err := newSyncPair()
	if err != nil {
		return nil, err
	}
	p := &spawned{sock: &syncSocket{f: parentSock}, log: orNop(s.log)}
	defer func() {
		if retErr != nil {
			p.abort()
		}
	}()
	syncFd := s.add(childSock)
	boot := nsenter.Bootstrap{Clone: s.clone, Joins: s.joins, Offsets: s.offsets, OOMScoreAdj: s.oomScoreAdj, LateCgroups: s.lateCgroup != nil}
	for _, t := range s.cgroupTasks {
		boot.Cgroups = append(boot.Cgroups, nsenter.CgroupFd{Fd: s.add(t.f), Path: t.path})
	}
	// The binary is passed at a known slot so that execve of
	// /proc/self/fd/N in the child names it, whatever fds the parent has.
	p.exeFd = s.add(s.exe)
	env := initEnv(syncFd, len(s.files), s.hugePages)
	p.stage, err = startPinned(s.affinity, func() (*procHandle, error) {
		exe, argv := "/proc/self/fd/"+strconv.Itoa(p.exeFd), []string{"nanobox-runc", "init"}
		if s.cgroup != nil {
			proc, err := forkExec(exe, argv, env, s.files, &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(s.cgroup.Fd())})
			if err == nil {
				p.inCgroup = true
				return proc, nil
			}
			// No process was made: start it the usual way, and the
			// caller moves it (whose checks then decide, as without
			// clone3: a refused move is the same error there), in
			// every hierarchy, the v1 ones the stage joins included.
			p.log.Debugf("clone3 into the container's cgroup: %v; starting the init stage outside it", err)
		}
		proc, err := forkExec(exe, argv, env, s.files, &syscall.SysProcAttr{})
		p.inCgroup = err == nil && s.cgroup == nil && len(s.cgroupTasks) > 0
		return proc, err
	})
	childSock.Close()
	if err != nil {
		return nil, fmt.Errorf("start the runtime's init stage: %w", err)
	}
	if s.ownAffinity && (s.affinity == nil || len(s.affinity.Initial) == 0) {
		// Before the stage has its bootstrap message: it forks nothing
		// yet, and runs on one thread (the nsenter constructor).
		if err := resetAffinity(p.stage.Pid); err != nil {
			p.log.Warnf("%v: the container's process may keep the runtime's CPU affinity", err)
		}
	}
	if err := p.sock.sendRaw(boot.Message()); err != nil {
		return nil, err
	}
	// The cgroups message, once the cgroup is made; with a new user
	// namespace after usermap-ok, which the stage waits for first.
	joinedLate := false
	sendLate := func() error {
		if late == nil {
			return nil
		}
		r := <-late
		late = nil
		if r.err != nil {
			return r.err
		}
		joinedLate = r.dir != nil || len(r.tasks) > 0
		return p.sendCgroups(r.dir, r.tasks)
	}
	if s.clone&unix.CLONE_NEWUSER == 0 {
		if err := sendLate(); err != nil {
			return nil, err
		}
	}
	for p.pid == 0 {
		msg, err := p.sock.recvRaw()
		if err != nil {
			if errors.Is(err, errSyncEOF) {
				return nil, errors.New("the process exited while entering the container's namespaces")
			}
			return nil, err
		}
		switch kind, val := nsenter.ParseReply(msg); kind {
		case nsenter.MsgUsermap:
			if s.usermap == nil {
				return nil, errors.New("nsenter: asked for a user map, but no user namespace is being created")
			}
			if err := s.usermap(p.stage.Pid); err != nil {
				return nil, err
			}
			if err := p.sock.sendRaw([]byte(nsenter.MsgUsermapOK)); err != nil {
				return nil, err
			}
			if err := sendLate(); err != nil {
				return nil, err
			}
		case nsenter.MsgPid, nsenter.MsgPidOutside:
			num, why, _ := strings.Cut(val, " ")
			pid, err := strconv.Atoi(num)
			if err != nil || pid <= 0 {
				return nil, fmt.Errorf("nsenter: bad pid %q", val)
			}
			if joinedLate {
				// The stage is in the v1 cgroups it joined: reap it
				// below, as when it was born there.
				p.inCgroup = kind == nsenter.MsgPid
				if !p.inCgroup {
					p.log.Debugf("%s; the caller moves init into the container's cgroup", why)
				}
			}
			ps, err := readProcStat(pid)
			if err != nil {
				return nil, fmt.Errorf("the process exited while entering the container's namespaces: %w", err)
			}
			p.pid, p.startTime = pid, ps.StartTime
			p.log.Debugf("nsexec container setup: stage %d forked %d", p.stage.Pid, pid)
		case nsenter.MsgError:
			return nil, errors.New(val)
		default:
			return nil, fmt.Errorf("nsenter: unexpected message %q", msg)
		}
	}
	if p.inCgroup || joinedLate {
		// The stage is in the container's cgroup too, and counts
		// against its pids limit until it is reaped: reap it now (it
		// exits once it has reported the pid), before the program
		// runs, rather than after an exec'd one may have forked.
		_ = p.stage.Wait()
		p.stage = nil
	}
	return p, nil
}

// lateCgroupResult is what spawnSpec.lateCgroup returned.
type lateCgroupResult struct {
	dir   *os.File
	tasks []nsenterCgroup
	err   error
}

// sendCgroups sends the stage the cgroups message of latecgroups, with dir
// and the tasks files as its descriptors. When the stage has failed
// already, its error is returned rather than the failed write's.
func (p *spawned) sendCgroups(dir *os.File, tasks []nsenterCgroup) error {
	fds := make([]int, 0, len(tasks)+1)
	paths := make([]string, 0, len(tasks))
	for _, t := range tasks {
		fds = append(fds, int(t.f.Fd()))
		paths = append(paths, t.path)
	}
	dirPath := ""
	if dir != nil {
		fds = append(fds, int(dir.Fd()))
		dirPath = dir.Name()
	}
	var rights []byte
	if len(fds) > 0 {
		rights = unix.UnixRights(fds...)
	}
	err := unix.Sendmsg(int(p.sock.f.Fd()), nsenter.CgroupsMessage(paths, dirPath), rights, nil, 0)
	if err == nil {
		return nil
	}
	if msg, rerr := p.sock.recvRaw(); rerr == nil {
		if kind, val := nsenter.ParseReply(msg); kind == nsenter.MsgError {
			return errors.New(val)
		}
	}
	return fmt.Errorf("send the container's cgroup to the init stage: %w", err)
}

// reap waits for the stage, which exits by itself once it has reported
// the pid, and closes the socket. Safe to call more than once.
func (p *spawned) reap() {
	if p.stage != nil {
		_ = p.stage.Wait()
		p.stage = nil
	}
	if p.sock != nil {
		p.sock.Close()
		p.sock = nil
	}
}

// abort kills the stage (it may still wait for a reply) and the forked
// process, and reaps both.
func (p *spawned) abort() {
	if p.stage != nil {
		_ = p.stage.Kill()
	}
	p.reap()
	p.kill()
}

// kill SIGKILLs the forked process if it is still the one started, and
// reaps it: it is the caller's child.
func (p *spawned) kill() {
	if p.pid <= 0 {
		return
	}
	if ps, err := readProcStat(p.pid); err == nil && ps.StartTime == p.startTime {
		_ = unix.Kill(p.pid, unix.SIGKILL)
		_, _ = unix.Wait4(p.pid, nil, 0, nil)
	}
	p.pid = 0
}

// childHandler handles one message of the forked process; done ends serve.
type childHandler func(m syncMsg) (done bool, err error)

// serve reads the forked process's messages until handle says done. An
// error message from the child becomes the returned error; its log
// messages go to the spawn's Logger; EOF (the child exited, or exec'd: the
// socket is close-on-exec) is errSyncEOF.
func (p *spawned) serve(handle childHandler) error {
	for {
		m, err := p.sock.recv()
		if err != nil {
			return err
		}
		switch m.Type {
		case syncError:
			return m.initError()
		case syncLog:
			logTo(p.log, m.Log)
			continue
		}
		done, err := handle(m)
		if err != nil || done {
			return err
		}
	}
}
