package libbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// ExecOpts are the per-invocation settings of Exec.
type ExecOpts struct {
	// ConsoleSocket receives the pty master when the process has a terminal.
	ConsoleSocket *os.File
	// ExtraFiles are passed to the process as fds 3, 4, ... (as in
	// os/exec.Cmd); they stay the caller's.
	ExtraFiles []*os.File
	// Stdin, Stdout, Stderr of the process; nil means the caller's own.
	Stdin, Stdout, Stderr *os.File
	// IgnorePaused allows exec into a paused container.
	IgnorePaused bool
	// ControllingTTY: Stdin is a terminal the caller opened (the slave of
	// a pty of its own, say), which the process makes its controlling
	// terminal in a session of its own, so that ^C and job control work.
	ControllingTTY bool
	// NewSession: the process leads a session (and a process group) of its
	// own, without a controlling terminal, unless it gets one (a PTY,
	// ControllingTTY). Without it, a process that was given no terminal
	// stays in the caller's session and process group: it can push input
	// into the caller's terminal (TIOCSTI on /dev/tty, run by the caller's
	// shell after it), write to that terminal past any output limit, and
	// signal the caller's whole process group (kill 0). A sandbox's
	// processes always have it, and so do the CLI's containers and exec'd
	// processes, as runc's (its nsexec calls setsid for each).
	NewSession bool
	// Subreaper makes the process a child subreaper (PR_SET_CHILD_SUBREAPER,
	// kept across execve): what it starts stays among its descendants
	// while it lives, instead of going to the container's init, so that
	// the whole tree can be found and killed (a persistent sandbox's Exec).
	Subreaper bool
	// Log receives what the process logs while it is set up; nil drops it.
	Log Logger
	// SubCgroups puts the process in existing sub-cgroups of the
	// container's cgroup instead (runc's exec --cgroup): controller (v1
	// name) to a path relative to the container's cgroup there, "" for
	// every controller (the only key on cgroup v2).
	SubCgroups map[string]string
}

// execConfig is what the parent sends the exec'd process after it joined
// the container's namespaces.
type execConfig struct {
	Process         *Process `json:"process"`
	Rootless        bool     `json:"rootless"`
	ConsoleSocketFd int      `json:"consoleSocketFd"` // -1: none
	ExeFd           int      `json:"exeFd"`
	PreserveFds     int      `json:"preserveFds"`
	ControllingTTY  bool     `json:"controllingTTY,omitempty"`
	NewSession      bool     `json:"newSession,omitempty"`
	Subreaper       bool     `json:"subreaper,omitempty"`
	// The container's policies: an exec'd process is confined like init.
	Seccomp      *Seccomp      `json:"seccomp,omitempty"`
	Landlock     *Landlock     `json:"landlock,omitempty"`
	Personality  *Personality  `json:"personality,omitempty"`
	MemoryPolicy *MemoryPolicy `json:"memoryPolicy,omitempty"`
	// State is the container's OCI state, for a seccomp notify listener.
	State []byte `json:"state,omitempty"`
	// LogLevel: as initConfig's.
	LogLevel string `json:"logLevel,omitempty"`
}

// Exec starts p inside the running container: it joins every namespace of
// init (through the nsenter stage, since user and mount namespaces cannot be
// joined by a running Go program) and returns the new process's pid once it
// has exec'd the program. The process is a child of the caller.
func (c *Container) Exec(p *Process, opts ExecOpts) (_ int, retErr error) {
	status := c.Status()
	switch status {
	case Stopped:
		return 0, fmt.Errorf("container %s %w: cannot exec in a stopped container", c.st.ID, ErrNotRunning)
	case Paused:
		if !opts.IgnorePaused {
			// runc's text ("cannot exec in a paused container"), which
			// callers match, then ours.
			return 0, fmt.Errorf("cannot exec in a paused container: container %s %w: resume it first, or use --ignore-paused", c.st.ID, ErrPaused)
		}
	}
	if len(p.Args) == 0 {
		return 0, errors.New("exec: no command given")
	}
	if p.Terminal && opts.ConsoleSocket == nil {
		return 0, errors.New("exec: a terminal needs a console socket: use --console-socket")
	}
	// The namespaces are opened here, while a pidfd pins init and its start
	// time is checked, and handed over as fds: a path like /proc/PID/ns/net
	// could name a stranger's namespace if init died and its pid was reused.
	pidfd, err := c.pidfd()
	if err != nil {
		return 0, err
	}
	defer unix.Close(pidfd)
	nsFiles, err := c.openNamespaces()
	if err != nil {
		if errors.Is(err, fs.ErrPermission) && c.Status() == Created {
			// A container confined at start (seccomp, Landlock,
			// AppArmor) keeps its init non-dumpable until then, so that
			// no process of it can ptrace init around the confinement;
			// its /proc files then belong to the host's root, out of a
			// rootless runtime's reach (initContainer).
			return 0, fmt.Errorf("%w: a rootless runtime cannot exec into a created container whose init is confined at start (seccomp, Landlock or AppArmor): start it first", err)
		}
		return 0, err
	}
	defer func() {
		for _, f := range nsFiles {
			f.file.Close()
		}
	}()
	if ps, err := readProcStat(c.st.InitPid); err != nil || ps.StartTime != c.st.InitStartTime {
		return 0, fmt.Errorf("container %s %w", c.st.ID, ErrNotRunning)
	}

	exe, err := sealedSelfExe(c.st.Config)
	if err != nil {
		return 0, err
	}
	defer exe.Close()

	cfg := c.st.Config
	sp := newSpawnSpec(opts.Stdin, opts.Stdout, opts.Stderr, opts.ExtraFiles)
	sp.hugePages = cfg.InitHugePages
	ec := &execConfig{
		Process: p, Rootless: c.rt.Rootless, PreserveFds: len(opts.ExtraFiles), ConsoleSocketFd: -1,
		Seccomp: cfg.Seccomp, Landlock: cfg.Landlock, Personality: cfg.Personality, MemoryPolicy: cfg.MemoryPolicy,
		ControllingTTY: opts.ControllingTTY, NewSession: opts.NewSession, Subreaper: opts.Subreaper, LogLevel: logLevelOf(opts.Log),
	}
	var state []byte
	if cfg.Seccomp != nil {
		state = marshalState(c.State())
		ec.State = state
	}
	if opts.ConsoleSocket != nil {
		ec.ConsoleSocketFd = sp.add(opts.ConsoleSocket)
	}
	for _, f := range nsFiles {
		sp.joins = append(sp.joins, nsenter.Join{Kind: f.kind, Path: "/proc/self/fd/" + strconv.Itoa(sp.add(f.file))})
	}
	sp.exe = exe
	// As runc: the container's oom_score_adj, unless the process sets its
	// own (otherwise it would keep its caller's, a shim's -998 say).
	sp.oomScoreAdj = p.OOMScoreAdj
	if sp.oomScoreAdj == nil {
		sp.oomScoreAdj = cfg.Process.OOMScoreAdj
	}
	sp.affinity, sp.ownAffinity = p.ExecCPUAffinity, true
	sp.log = opts.Log
	// The process is born in the container's cgroup, as init is (see
	// bornCgroup); admit moves it only when it could not be. Not into
	// sub-cgroups, and not into a frozen cgroup: the stage would freeze
	// before it reports, and the move after it keeps what runc does.
	cg := c.cgroup()
	if cg != nil && len(opts.SubCgroups) > 0 {
		// A bad --cgroup is refused before a process is started for it.
		if _, err := cg.subCgroupTargets(opts.SubCgroups); err != nil {
			return 0, fmt.Errorf("exec: %w", err)
		}
	}
	var born bornCgroup
	if cg != nil && len(opts.SubCgroups) == 0 && status != Paused {
		if err := cg.openForStage(&born); err != nil {
			orNop(opts.Log).Debugf("exec: open the container's cgroup for the new process to be born in: %v; moving it instead", err)
		}
		sp.cgroup, sp.cgroupTasks = born.dir, born.tasks
	}

	child, err := sp.start()
	// The stage has its copies (or is gone).
	born.closeFiles()
	if err != nil {
		return 0, fmt.Errorf("exec: %w", err)
	}
	defer func() {
		if retErr != nil {
			child.abort()
			return
		}
		child.reap()
	}()
	ec.ExeFd = child.exeFd
	if l := ec.LogLevel; l == logrus.DebugLevel.String() || l == logrus.TraceLevel.String() {
		logAffinity(child.log, child.pid)
	}
	if err := c.admit(child, cg, opts.SubCgroups); err != nil {
		return 0, fmt.Errorf("exec: %w", err)
	}
	if err := child.sock.sendExec(ec); err != nil {
		return 0, fmt.Errorf("exec: %w", err)
	}
	// The socket is close-on-exec in the child: EOF means the program
	// was executed; anything else is the child's error.
	err = child.serve(func(m syncMsg) (bool, error) {
		if m.Type == syncSeccompFd {
			return false, deliverSeccompFd(child.sock, cfg.Seccomp, state)
		}
		return false, fmt.Errorf("exec: unexpected message %q", m.Type)
	})
	if !errors.Is(err, errSyncEOF) {
		return 0, err
	}
	return child.pid, nil
}

// admit makes the new process one of the container's, before it runs the
// program: it joins the cgroup or, where the container has neither a
// cgroup nor a pid namespace of its own, is recorded (processes_linux.go).
// Under the container's lock, with init checked to be alive: a delete
// --force either comes first (and the exec fails) or finds the process.
func (c *Container) admit(child *spawned, cg *cgroupHandle, sub map[string]string) error {
	lock, err := c.lock()
	if err != nil {
		return err
	}
	defer lock.Close()
	if !c.isInit(c.st.InitPid) {
		return fmt.Errorf("container %s %w: it stopped", c.st.ID, ErrNotRunning)
	}
	if len(sub) > 0 {
		if cg == nil {
			return fmt.Errorf("--cgroup: container %s has no cgroup (an unprivileged user without a delegated cgroup v2 subtree created it)", c.st.ID)
		}
		return cg.joinSub(child.pid, sub)
	}
	if c.tracksExecs(cg) {
		return c.recordExec(child.pid, child.startTime)
	}
	if child.inCgroup || cg == nil {
		return nil
	}
	beforeCgroupMove(child.pid)
	err = cg.m.AddPid("", child.pid)
	if err != nil {
		// cgroup v2 allows no process in a cgroup whose children have
		// domain controllers: where init was moved into a sub-cgroup and
		// they were enabled, the process joins init there, as in runc.
		if dir := cg.joinInitSubCgroup(c.st.InitPid, child.pid); dir != "" {
			child.log.Debugf("exec: join cgroup of container %s: %v; joined init's cgroup %s instead", c.st.ID, err, dir)
			return nil
		}
		return fmt.Errorf("join cgroup of container %s: %w", c.st.ID, err)
	}
	return nil
}

type nsFile struct {
	kind string
	file *os.File
}

// openNamespaces opens the namespaces of the container: init's own for those
// it made, the configured path for those it joined.
func (c *Container) openNamespaces() ([]nsFile, error) {
	var out []nsFile
	for _, ns := range c.st.Config.Namespaces {
		kind, _, ok := nsenter.Kind(string(ns.Type))
		if !ok {
			return nil, fmt.Errorf("namespace type %q is not supported", ns.Type)
		}
		path := ns.Path
		if path == "" {
			path = fmt.Sprintf("/proc/%d/ns/%s", c.st.InitPid, kind)
		}
		f, err := os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			for _, o := range out {
				o.file.Close()
			}
			return nil, fmt.Errorf("open %s namespace of container %s: %w", ns.Type, c.st.ID, err)
		}
		out = append(out, nsFile{kind: kind, file: f})
	}
	return out, nil
}

// initExec is the child side of Exec: already in the container's
// namespaces, it sets up credentials and stdio and execs the program. It
// returns only on failure.
func initExec(sock *syncSocket, ec *execConfig) error {
	if ec == nil || ec.Process == nil || len(ec.Process.Args) == 0 {
		return errors.New("exec: no process received")
	}
	_ = unix.Close(ec.ExeFd)
	// First, so that nothing is left to do under a seccomp filter that
	// may deny close_range (see initContainer).
	if err := closeExtraFDs(ec.PreserveFds); err != nil {
		return err
	}
	if err := setDumpable(false); err != nil {
		return err
	}
	if ec.Subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("prctl PR_SET_CHILD_SUBREAPER: %w", err)
		}
	}
	if err := enterSession(ec.ControllingTTY, ec.NewSession, ec.ConsoleSocketFd); err != nil {
		return err
	}
	p := ec.Process
	// Set by the nsenter stage already (see Exec).
	p.OOMScoreAdj = nil
	pe, err := prepareProcess(p, ec.ConsoleSocketFd, false, ec.Rootless,
		containerSettings{ec.Seccomp, ec.Landlock, ec.Personality, ec.MemoryPolicy, nil})
	if err != nil {
		return err
	}
	// In the container's cgroup by now (born there, or moved by the
	// parent before it sent the config).
	if err := applyExecAffinity(p.ExecCPUAffinity); err != nil {
		pe.filters.close()
		return err
	}
	// The sync socket stays open until execve (close-on-exec): a failure
	// from here on reaches the runtime like any other, and so does the
	// notify fd of a filter with a notify rule. (runc's wording for this
	// point, which its suite and log readers look for.)
	pe.filters.logSeccompFlags()
	logrus.Debugf("setns_init: about to exec %s", p.Args[0])
	return pe.run(sock, nil, nil)
}
