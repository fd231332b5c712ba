package libbox

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// Runtime is a state root: one directory per container.
type Runtime struct {
	// Root is the state directory (e.g. /run/nanobox-runc).
	Root string
	// Rootless is true when the runtime runs without root on the host. It
	// is the one place the mode is decided: init, exec and the cgroup code
	// all take it from here.
	Rootless bool
	// Ephemeral: the state is written without fsync (see
	// writeFileAtomic), for containers that never outlive the process
	// that created them (a sandbox, a foreground `run` without --keep).
	// Only a crash of the host loses such a write, and that ends the
	// container too: its processes and cgroups are gone, and a state
	// directory left behind is removed by delete or swept. runc never
	// fsyncs its state. An fsync on a disk-backed state root waits for
	// a journal commit, a millisecond or more on the path of every run.
	// Left false, every state write is durable (file and directory
	// fsynced), for containers other processes manage later.
	Ephemeral bool
}

// Container is a handle on one container's state directory.
type Container struct {
	rt  *Runtime
	dir string
	st  *persisted
	// head is, for a container opened by LoadLight (st.Config nil), what
	// Status, State and Signal read of its config (see headConfig).
	head *configHead
	// net are a network allowlist's listeners, kept by Create for a
	// sandbox's own relay (CreateOpts.netInProcess).
	net *netFiles
	// held are what Create holds for the caller (CreateOpts.holdRefs),
	// until it takes them.
	held []*os.File
}

// CreateOpts are the per-invocation settings of create and run.
type CreateOpts struct {
	// ConsoleSocket is a connected AF_UNIX socket the pty master is sent
	// over when the process has a terminal.
	ConsoleSocket *os.File
	// ExtraFiles are passed to the process as fds 3, 4, ... (as in
	// os/exec.Cmd). They stay the caller's: the runtime neither closes them
	// nor keeps them past Create.
	ExtraFiles []*os.File
	// Env is added to init's environment (KEY=VALUE) and to nothing
	// else: it is not part of the container's Config, so processes exec'd
	// later do not see it (runc's LISTEN_FDS and LISTEN_PID, which name
	// init's own descriptors).
	Env []string
	// Stdin, Stdout, Stderr of init; nil means the caller's own.
	Stdin, Stdout, Stderr *os.File
	// ControllingTTY: Stdin is a terminal the caller opened, which init
	// makes its controlling terminal (see ExecOpts.ControllingTTY).
	ControllingTTY bool
	// NewSession: the process leads a session of its own, without a
	// controlling terminal (see ExecOpts.NewSession).
	NewSession bool
	// NetworkLog, for a container with a network allowlist, is where its
	// supervisor logs every denied attempt (NetworkLogJSON: as JSON
	// objects with level, msg and time, as --log-format json); nil
	// discards them. The supervisor gets a descriptor of its own.
	NetworkLog     *os.File
	NetworkLogJSON bool
	// netInProcess keeps the allowlist's listeners in the Container for
	// the caller to relay (a sandbox's Run) instead of starting a
	// supervisor.
	netInProcess bool
	// Log receives warnings and init's set-up messages; nil drops them.
	Log Logger
	// pause makes a container with no program start the pause as its pid
	// 1 (a persistent sandbox, deferred_linux.go).
	pause bool
	// earlyFilters lets init apply its filters before it waits for start
	// (deferred_linux.go): set only for profiles known to allow what the
	// Go runtime may do while init waits.
	earlyFilters bool
	// holdRefs keeps in the Container (takeHeld) references whose last
	// close would otherwise fall on the program's execve or exit: what
	// init sends (sendHeld: its mount namespace, its procfs handles) and
	// the runtime binary's file init is executed from (a detached
	// read-only bind mount, dissolved by its last close). A pooled
	// sandbox holds them until its teardown (pool_linux.go).
	holdRefs bool
	// waiter lets a deferred init wait for its program in the waiter
	// (waiter_linux.go) rather than in the Go runtime.
	waiter bool
}

// takeHeld hands over what Create held (CreateOpts.holdRefs); the caller
// closes them.
func (c *Container) takeHeld() []*os.File {
	f := c.held
	c.held = nil
	return f
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// ID returns the container id.
func (c *Container) ID() string { return c.st.ID }

// Config returns the container's configuration.
func (c *Container) Config() *Config { return c.st.Config }

// Pid returns init's pid in the runtime's pid namespace.
func (c *Container) Pid() int { return c.st.InitPid }

func (r *Runtime) dir(id string) string { return filepath.Join(r.Root, id) }

// Load opens an existing container.
func (r *Runtime) Load(id string) (*Container, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	dir := r.dir(id)
	st, err := loadState(id, dir, readState, func(st *persisted) string { return st.ID })
	if err != nil {
		return nil, err
	}
	return &Container{rt: r, dir: dir, st: st}, nil
}

// loadState reads the state of container id from dir with read, with the
// errors of Load: not there, damaged, or of another id.
func loadState[T any](id, dir string, read func(string) (*T, error), idOf func(*T) string) (*T, error) {
	st, err := read(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("container %s %w", id, ErrNotExist)
		}
		return nil, fmt.Errorf("container %s: %w", id, err)
	}
	if got := idOf(st); got != id {
		return nil, fmt.Errorf("container %s: %w: state.json names %q", id, ErrInvalidState, got)
	}
	return st, nil
}

// LightContainer is a container opened to be looked at or signalled
// (LoadLight): its state without the rest of its configuration, which the
// commands that run most often (state, kill, list) never read.
type LightContainer struct{ c *Container }

// LoadLight opens an existing container as Load does, with the same
// errors, but decodes of its configuration only what Status, State and
// Signal read: in a new process that saves decoding the ~100 types under
// Config, the larger part of `state` and `kill`. The handle never gives
// the whole Config away, nor anything that reads it.
func (r *Runtime) LoadLight(id string) (*LightContainer, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	dir := r.dir(id)
	sh, err := loadState(id, dir, readStateHead, func(st *stateHead) string { return st.ID })
	if err != nil {
		return nil, err
	}
	st := &persisted{
		ID: sh.ID, InitPid: sh.InitPid, InitStartTime: sh.InitStartTime, Created: sh.Created,
		Owner: sh.Owner, CgroupPaths: sh.CgroupPaths,
	}
	return &LightContainer{&Container{rt: r, dir: dir, st: st, head: sh.Config}}, nil
}

// ID returns the container id.
func (l *LightContainer) ID() string { return l.c.ID() }

// Pid returns init's pid in the runtime's pid namespace.
func (l *LightContainer) Pid() int { return l.c.Pid() }

// Status is Container.Status.
func (l *LightContainer) Status() Status { return l.c.Status() }

// State is Container.State.
func (l *LightContainer) State() *OCIState { return l.c.State() }

// Signal is Container.Signal.
func (l *LightContainer) Signal(sig unix.Signal, all bool) error { return l.c.Signal(sig, all) }

// headConfig is the config Status, State and Signal (and what they call)
// read: the container's, or for a LoadLight container a Config of its
// head's fields alone, all they read of it.
func (c *Container) headConfig() *Config {
	if c.st.Config != nil {
		return c.st.Config
	}
	return c.head.config()
}

// List returns the ids of the containers under the root, sorted.
func (r *Runtime) List() ([]string, error) {
	ents, err := os.ReadDir(r.Root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", r.Root, err)
	}
	var ids []string
	for _, e := range ents {
		if !e.IsDir() || ValidateID(e.Name()) != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.Root, e.Name(), stateFile)); err != nil {
			continue // being created, or half-deleted
		}
		ids = append(ids, e.Name())
	}
	return ids, nil
}

// Status derives the container's status from its init process and the exec
// fifo: nothing stored can go stale.
func (c *Container) Status() Status {
	if c.stopped() {
		return Stopped
	}
	// Before created, as in runc: a created container can be paused too.
	if cg := c.cgroup(); cg != nil && cg.frozen() {
		return Paused
	}
	if _, err := os.Lstat(filepath.Join(c.dir, fifoName)); err == nil {
		return Created
	}
	return Running
}

// stopped reports whether init is gone (Status() == Stopped): not there,
// its pid recycled (another start time), or a zombie.
func (c *Container) stopped() bool {
	ps, err := readProcStat(c.st.InitPid)
	return err != nil || ps.StartTime != c.st.InitStartTime || ps.State == 'Z' || ps.State == 'X'
}

// State returns the OCI state of the container.
func (c *Container) State() *OCIState {
	status := c.Status()
	pid := c.st.InitPid
	if status == Stopped {
		pid = 0
	}
	s := ociState(c.st.ID, c.headConfig(), status, pid, c.st.Created, c.st.Owner)
	s.Annotations = c.oomAnnotation(s.Annotations)
	return s
}

// Create sets a container up completely: namespaces, mounts, devices, the
// process's credentials. Its init then waits for Start. On failure nothing
// is left behind: no state directory, no process.
func (r *Runtime) Create(id string, cfg *Config, opts CreateOpts) (_ *Container, retErr error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.Root, 0o711); err != nil {
		return nil, fmt.Errorf("create state root %s: %w", r.Root, err)
	}
	dir := r.dir(id)
	lock, err := r.newStateDir(id)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	c := &Container{rt: r, dir: dir}
	var p *initProcess
	defer func() {
		if retErr == nil {
			return
		}
		if p != nil {
			p.net.close()
			closeFiles(p.held)
			p.held = nil
			p.kill()
			if p.cgroup != nil {
				p.cgroup.destroyBestEffort()
			}
		}
		_ = unmountShared(cfg)
		_ = os.RemoveAll(dir)
		// The container is destroyed: its poststop hooks run, as after
		// a delete (the spec's lifecycle goes on at its destruction when
		// a prestart, createRuntime or createContainer hook fails; runc
		// runs them whatever failed). Their failure is a warning.
		if hooks := cfg.Hooks.Poststop; len(hooks) > 0 {
			created, owner := time.Now().UTC(), ownerName()
			if p != nil {
				created, owner = p.created, p.owner
			}
			st := ociState(id, cfg, Stopped, 0, created, owner)
			if err := runAllHooks("poststop", hooks, marshalState(st)); err != nil {
				orNop(opts.Log).Warnf("%v", err)
			}
		}
	}()
	withFiles, err := withNetworkFiles(dir, cfg)
	if err != nil {
		return nil, err
	}
	cfg = withFiles
	// The state is written while init sets the container up, and put
	// in place once it is ready: off the critical path of a create. (On
	// failure the temp file goes with the directory, below.)
	var state *pendingFile
	p, err = startInit(r, id, dir, cfg, opts, func(p *initProcess) error {
		c.st = &persisted{
			ID:            id,
			InitPid:       p.pid,
			InitStartTime: p.startTime,
			Created:       p.created,
			Owner:         p.owner,
			Config:        cfg,
			CgroupPaths:   p.cgroup.paths(),
		}
		var err error
		state, err = prepareState(dir, c.st, !r.Ephemeral)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := state.commit(); err != nil {
		return nil, err
	}
	c.held, p.held = p.held, nil
	if p.net != nil {
		files := p.net
		p.net = nil
		if opts.netInProcess {
			c.net = files
		} else if err := c.startNetSupervisor(files, opts); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// newStateDir makes the container's directory and returns it locked. The
// root's lock is held from mkdir to flock, so stale-state clean-up
// (RemoveStale) can never find the directory unlocked and remove it under
// a create in progress.
func (r *Runtime) newStateDir(id string) (*os.File, error) {
	rootLock, err := r.lockRoot()
	if err != nil {
		return nil, fmt.Errorf("state root %s: %w", r.Root, err)
	}
	defer rootLock.Close()
	dir := r.dir(id)
	if err := os.Mkdir(dir, 0o711); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("container %s %w", id, ErrExist)
		}
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return lock, nil
}

func ownerName() string {
	uid := os.Geteuid()
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

// lockMaybeReread is lock, or with reread false only the lock: c's state
// is used as it is (a handle from Create, whose state this process wrote).
func (c *Container) lockMaybeReread(reread bool) (*os.File, error) {
	if reread {
		return c.lock()
	}
	return lockDir(c.dir)
}

// lock takes the container's lock and rereads its state: what was loaded
// before may be stale (the container deleted, or made again with the same
// id, in the meantime).
func (c *Container) lock() (*os.File, error) {
	lock, err := lockDir(c.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("container %s %w", c.st.ID, ErrNotExist)
		}
		return nil, err
	}
	st, err := readState(c.dir)
	if err != nil {
		lock.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("container %s %w", c.st.ID, ErrNotExist)
		}
		return nil, fmt.Errorf("container %s: %w", c.st.ID, err)
	}
	if st.ID != c.st.ID {
		lock.Close()
		return nil, fmt.Errorf("container %s: %w: state.json names %q", c.st.ID, ErrInvalidState, st.ID)
	}
	c.st = st
	return lock, nil
}

// Start lets a created container's init execute the user program.
func (c *Container) Start() error {
	return c.startWith([]byte{startByte}, true)
}

// startWith writes msg, the start byte or a start message
// (deferred_linux.go), into the exec fifo and waits for the program to be
// executed. reread: the state is read again under the lock (it may have
// changed since c was loaded); without, c's is used as it is (a handle
// from Create, for a start that costs as little as it can).
func (c *Container) startWith(msg []byte, reread bool) error {
	lock, err := c.lockMaybeReread(reread)
	if err != nil {
		return err
	}
	defer lock.Close()
	// Without reread, the open of the fifo below is the check: it fails
	// when init is gone, or was started already (no fifo).
	if reread {
		switch s := c.Status(); s {
		case Created:
		case Stopped:
			return fmt.Errorf("container %s %w: a stopped container cannot be started again", c.st.ID, ErrStopped)
		default:
			return fmt.Errorf("container %s %w (it is %s)", c.st.ID, ErrNotCreated, s)
		}
	}
	fifo := filepath.Join(c.dir, fifoName)
	// init holds the fifo open for reading and blocks in read(2) until
	// this byte arrives. O_NONBLOCK: with no reader (init died) the open
	// fails with ENXIO instead of hanging.
	fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENXIO) {
			return fmt.Errorf("container %s: init exited before it could start", c.st.ID)
		}
		return fmt.Errorf("open exec fifo: %w", err)
	}
	defer unix.Close(fd)
	if err := writeFifo(fd, msg); err != nil {
		return fmt.Errorf("container %s: signal init to start: %w", c.st.ID, err)
	}
	// init keeps its end open, close-on-exec, until execve of the program:
	// the fifo has no reader left (POLLERR) once the program runs (or init
	// died). Waiting for that makes start return after the program was
	// executed, so poststart hooks run after it, as the runtime spec says.
	fds := []unix.PollFd{{Fd: int32(fd)}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("container %s: wait for the program to start: %w", c.st.ID, err)
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			break
		}
	}
	failed := startFailure(fifo)
	// The fifo's absence is what marks the container as running.
	if err := os.Remove(fifo); err != nil {
		return fmt.Errorf("remove exec fifo: %w", err)
	}
	if failed != nil {
		return fmt.Errorf("container %s: %w", c.st.ID, failed)
	}
	if hooks := c.st.Config.Hooks.Poststart; len(hooks) > 0 {
		// The state of the moment the program started: running, with its
		// pid. (Derived now, it could already read stopped: a short
		// program may have exited before the hook runs.)
		st := ociState(c.st.ID, c.st.Config, Running, c.st.InitPid, c.st.Created, c.st.Owner)
		if err := runHooks("poststart", hooks, marshalState(st)); err != nil {
			// OCI runtime spec, "Lifecycle" step 9: a failing poststart
			// hook is an error, and the runtime stops the container (delete
			// still tears it down, step 12). runc kills init and returns
			// the hook's error, the later poststart hooks not run.
			if kerr := c.killAndWait(); kerr != nil {
				err = errors.Join(err, fmt.Errorf("stop container %s after the failed poststart hook: %w", c.st.ID, kerr))
			}
			return err
		}
	}
	return nil
}

// startFailure reads what init left in the exec fifo, once it has no
// reader left: nothing when the program was executed; the error text when
// init failed after the start byte (filters, startContainer hooks, execve;
// init_linux.go); the start byte itself when init died before reading it.
// The data outlives init because Start still holds the fifo open.
func startFailure(fifo string) error {
	fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // nothing to read it through; the status tells the rest
	}
	defer unix.Close(fd)
	buf := make([]byte, 4097)
	n, err := unix.Read(fd, buf)
	switch {
	case err != nil || n <= 0:
		return nil
	case n >= 1 && (buf[0] == startByte || buf[0] == startWithProgram):
		return errors.New("init exited before it could start the program")
	}
	return &ProgramError{Err: parseStartError(string(buf[:n]))}
}

// ProgramError is why the program did not run once start released init:
// its execve failed (or a step init takes right before it), in init's own
// words, which runc's init prints as the container's stderr ("exec
// /run.sh: no such file or directory").
type ProgramError struct{ Err error }

func (e *ProgramError) Error() string { return e.Err.Error() }
func (e *ProgramError) Unwrap() error { return e.Err }

// SetupError is an error init (or the process set up for an exec)
// reported before the program ran: a namespace, a mount, a limit it could
// not set up, in its own words. runc's CLI prints it after "unable to
// start container process: error during container init: ".
type SetupError struct{ msg string }

func (e *SetupError) Error() string { return e.msg }

// WarningError is an error the operation survived: it completed, and the
// caller should log Err as a warning.
type WarningError struct{ Err error }

func (w *WarningError) Error() string { return w.Err.Error() }
func (w *WarningError) Unwrap() error { return w.Err }

// pidfd opens init's pidfd and checks it is still the same process (the pid
// was not recycled), so signals can never reach a stranger.
func (c *Container) pidfd() (int, error) {
	fd, err := unix.PidfdOpen(c.st.InitPid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return -1, &notRunningError{c.st.ID}
		}
		return -1, fmt.Errorf("pidfd_open %d: %w", c.st.InitPid, err)
	}
	ps, err := readProcStat(c.st.InitPid)
	if err != nil || ps.StartTime != c.st.InitStartTime {
		unix.Close(fd)
		return -1, &notRunningError{c.st.ID}
	}
	return fd, nil
}

// pinInit is what Signal needs of init: a pidfd of it, and whether the
// container is stopped (Status() == Stopped) from one read of its
// /proc/PID/stat, taken after the pidfd so that it also proves the pidfd
// init's, not a recycled pid's (as pidfd does). pidfd is -1 when stopped,
// or when err says why there is none (a running container's cgroup can
// still be signalled without it).
func (c *Container) pinInit() (pidfd int, stopped bool, err error) {
	fd, err := unix.PidfdOpen(c.st.InitPid, 0)
	if errors.Is(err, unix.ESRCH) {
		return -1, true, nil
	}
	if err != nil {
		// Signalling a stopped container needs no pidfd (nor a
		// kernel with pidfd_open).
		if c.stopped() {
			return -1, true, nil
		}
		return -1, false, fmt.Errorf("pidfd_open %d: %w", c.st.InitPid, err)
	}
	if c.stopped() {
		unix.Close(fd)
		return -1, true, nil
	}
	return fd, false, nil
}

// Pidfd is a pidfd of the container's init (pidfd_open(2)), checked to be
// the process the container started (its pid was not recycled). The caller
// closes it.
func (c *Container) Pidfd() (*os.File, error) {
	fd, err := c.pidfd()
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "pidfd:"+strconv.Itoa(c.st.InitPid)), nil
}

// Signal sends sig to init, or with all to every process of the container.
//
// As in runc, all on a stopped container is not an error: it still reaches
// whatever is left in the container's cgroup (processes that outlived init
// in a pid namespace it did not own). containerd's shim sends `kill --all ID
// 9` once init has exited, and fails to record the exit if that fails.
func (c *Container) Signal(sig unix.Signal, all bool) error {
	cg := c.cgroup()
	// SIGKILL to a container without a pid namespace of its own kills all
	// its processes, as runc's (1.2 and later) does: the kernel kills the
	// rest with init only when init is a pid namespace's init, and they
	// would be left behind, running, init gone or not.
	implied := sig == unix.SIGKILL && !all && !c.ownPidNS()
	if implied {
		all = true
	}
	// init pinned first, then checked once: that look at its stat tells
	// both whether the container is stopped and that the pidfd is init's.
	pidfd, stopped, pinErr := c.pinInit()
	if stopped {
		if !all {
			return &notRunningError{c.st.ID}
		}
		if cg == nil || !cg.anyExists() {
			if cg == nil && c.tracksExecs(nil) {
				// Exec'd processes may outlive init here.
				return c.signalAll(sig)
			}
			if implied {
				return &notRunningError{c.st.ID}
			}
			return nil
		}
		return cg.signal(sig)
	}
	if pidfd >= 0 {
		defer unix.Close(pidfd)
	}
	if all && cg != nil {
		return cg.signal(sig)
	}
	if all {
		if err := c.signalAll(sig); err != nil {
			return err
		}
	}
	if pinErr != nil {
		return pinErr
	}
	if err := unix.PidfdSendSignal(pidfd, sig, nil, 0); err != nil && !(all && errors.Is(err, unix.ESRCH)) {
		return fmt.Errorf("signal container %s: %w", c.st.ID, err)
	}
	if sig == unix.SIGKILL && cg != nil && cg.frozen() {
		// A paused container is killed, not left frozen with the kill
		// pending (the v1 freezer holds even SIGKILLed tasks).
		_ = cg.freeze(cgroups.Thawed)
	}
	return nil
}

// Delete removes a stopped or created container; force also kills a
// running one. Poststop hooks run last; their failure is a warning.
func (c *Container) Delete(force bool) error {
	return c.deleteWith(force, true)
}

// deleteWith is Delete; reread false uses c's state as it is, for the
// handle Create returned in this process: what delete uses of the state
// (the id, init, the cgroup, the namespaces and hooks) does not change
// after create (the teardown of a sandbox's run).
func (c *Container) deleteWith(force, reread bool) error {
	lock, err := c.lockMaybeReread(reread)
	if err != nil {
		return err
	}
	defer lock.Close()
	switch s := c.Status(); s {
	case Stopped, Created:
		// runc deletes a created container without --force: it never ran.
	default:
		if !force {
			err := ErrRunning
			if s == Paused {
				err = ErrPaused
			}
			return fmt.Errorf("container %s %w: stop it first, or use delete --force", c.st.ID, err)
		}
	}
	// Of a stopped container too: what outlived init (exec'd processes
	// outside a pid namespace of its own) goes with it.
	if err := c.killAndWait(); err != nil {
		return err
	}
	var warn error
	if hooks := c.st.Config.Hooks.Poststop; len(hooks) > 0 {
		st := c.State()
		st.Status = Stopped
		st.Pid = 0
		warn = runAllHooks("poststop", hooks, marshalState(st))
	}
	if cg := c.cgroup(); cg != nil {
		// Also after init was SIGKILLed: leftovers are killed first. A
		// cgroup that will not go is reported, not kept as state.
		if err := cg.destroy(); err != nil {
			warn = errors.Join(warn, fmt.Errorf("container %s: %w", c.st.ID, err))
		}
	}
	if err := stopNetSupervisor(c.dir); err != nil {
		warn = errors.Join(warn, fmt.Errorf("container %s: %w", c.st.ID, err))
	}
	// A container in the runtime's mount namespace leaves its mounts there.
	if err := unmountShared(c.st.Config); err != nil {
		warn = errors.Join(warn, fmt.Errorf("container %s: %w", c.st.ID, err))
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("remove state of %s: %w", c.st.ID, err)
	}
	if warn != nil {
		return &WarningError{Err: warn}
	}
	return nil
}

// Wait reaps init, which must be a child of the calling process (it is after
// Create in the same process: init is cloned with CLONE_PARENT), and returns
// its wait status.
func (c *Container) Wait() (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(c.st.InitPid, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("wait for container %s: %w", c.st.ID, err)
		}
		return ws, nil
	}
}

// ExitCode turns a wait status into a shell-style exit code (128+N for a
// signal).
func ExitCode(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// initProcess is init as seen from the parent during create.
type initProcess struct {
	*spawned
	created time.Time
	owner   string
	// cgroup is the container's cgroup; nil when it runs without one.
	cgroup *cgroupHandle
	// net are the listeners of a network allowlist, from init.
	net *netFiles
	// held: CreateOpts.holdRefs.
	held []*os.File
}

// lateCgroupOK says whether the stage may join the container's cgroup after
// making and joining the namespaces (spawnSpec.lateCgroup). clone3 into a
// cgroup2 directory checks the caller's credentials (write access to
// cgroup.procs there and in the common ancestor), so the stage must still
// be the runtime's own user on the host when it forks init: no joined user
// namespace, and a new one only where the stage's setresuid 0 in it leaves
// it that user (0 unmapped, or mapped to it: rootless, a sandbox). Nor may
// it have joined a cgroup namespace, which limits what a move may reach. (A
// new cgroup namespace is made by init, later.)
func lateCgroupOK(cfg *Config, cloneFlags uintptr, joins []nsenter.Join) bool {
	for _, j := range joins {
		if j.Kind == "user" || j.Kind == "cgroup" {
			return false
		}
	}
	if cloneFlags&unix.CLONE_NEWUSER == 0 {
		return true
	}
	return hostIDOfRoot(cfg.UIDMappings, uint32(os.Geteuid())) == uint32(os.Geteuid()) &&
		hostIDOfRoot(cfg.GIDMappings, uint32(os.Getegid())) == uint32(os.Getegid())
}

// hostIDOfRoot is the host id that id 0 of a user namespace with maps maps
// to, or self when it maps none (the process then keeps its ids).
func hostIDOfRoot(maps []IDMap, self uint32) uint32 {
	for _, m := range maps {
		if m.ContainerID == 0 && m.Size > 0 {
			return m.HostID
		}
	}
	return self
}

// startInit re-executes the runtime binary as the container's init, creates
// or joins its namespaces (nsenter, before the Go runtime of init starts),
// writes its id maps, sends it the config and serves its requests until it
// reports that the container is set up; configSent is called once init has
// its config (and is setting the container up). On error init is dead and
// reaped.
func startInit(r *Runtime, id, dir string, cfg *Config, opts CreateOpts, configSent func(*initProcess) error) (_ *initProcess, retErr error) {
	cloneFlags, joins, err := namespaceFlags(cfg)
	if err != nil {
		return nil, err
	}
	if len(cfg.NetDevices) > 0 && r.Rootless {
		return nil, errors.New("linux.netDevices: moving a host network device needs root (CAP_NET_ADMIN on the host): remove linux.netDevices, or run as root")
	}
	fifo := filepath.Join(dir, fifoName)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("create exec fifo: %w", err)
	}
	// init gets the fifo already open read-write: opening it never blocks,
	// init needs no access to the path (unreachable after pivot_root, and
	// owned by us, not by the container's user), and `start` can tell a
	// dead init (no reader left: ENXIO) from a waiting one.
	fifoFile, err := os.OpenFile(fifo, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open exec fifo: %w", err)
	}
	defer fifoFile.Close()

	exe, err := sealedSelfExe(cfg)
	if err != nil {
		return nil, err
	}
	defer exe.Close()

	sp := newSpawnSpec(opts.Stdin, opts.Stdout, opts.Stderr, opts.ExtraFiles)
	sp.hugePages = cfg.InitHugePages
	icfg := cfg
	if len(opts.Env) > 0 {
		withEnv := *cfg
		withEnv.Process.Env = append(slices.Clip(cfg.Process.Env), opts.Env...)
		icfg = &withEnv
	}
	ic := &initConfig{Config: icfg, ID: id, PreserveFds: len(opts.ExtraFiles), ConsoleSocketFd: -1, Rootless: r.Rootless, ControllingTTY: opts.ControllingTTY, NewSession: opts.NewSession, LogLevel: logLevelOf(opts.Log), Pause: opts.pause, EarlyFilters: opts.earlyFilters, SendHeld: opts.holdRefs, Waiter: opts.waiter && exeWithoutFileCaps()}
	ic.FifoFd = sp.add(fifoFile)
	if opts.ConsoleSocket != nil {
		ic.ConsoleSocketFd = sp.add(opts.ConsoleSocket)
	}
	ic.NewUTSNS = cloneFlags&unix.CLONE_NEWUTS != 0
	ic.NewNetNS = cloneFlags&unix.CLONE_NEWNET != 0
	// The cgroup namespace is made by init itself, once the parent has
	// moved it into the container's cgroup: made earlier, its root would
	// be the runtime's cgroup.
	ic.NewCgroupNS = cloneFlags&unix.CLONE_NEWCGROUP != 0
	sp.exe = exe
	sp.clone = cloneFlags &^ unix.CLONE_NEWCGROUP
	sp.joins = joins
	sp.oomScoreAdj = cfg.Process.OOMScoreAdj
	for _, clock := range slices.Sorted(maps.Keys(cfg.TimeOffsets)) {
		o := cfg.TimeOffsets[clock]
		sp.offsets = append(sp.offsets, nsenter.TimeOffset{Clock: clock, Secs: o.Secs, Nanosecs: o.Nanosecs})
	}
	sp.usermap = func(stagePid int) error { return writeIDMaps(stagePid, cfg, r.Rootless) }
	sp.log = opts.Log
	sp.ownAffinity = true

	// The cgroup is made, with its limits (pids.max comes once init is
	// ready: see lateResources), before init, for init to be born in it
	// (see cgroupBeforeInit): while the stage makes the namespaces, where
	// it can join the cgroup after them (spawnSpec.lateCgroup), else first.
	var (
		born   *bornCgroup
		bornOK bool
		early  *cgroupHandle
	)
	makeCgroup := func() error {
		var err error
		born, bornOK, err = cgroupBeforeInit(id, cfg, r.cgroupRootless(), opts.Log)
		if born != nil {
			early = born.h
		}
		return err
	}
	if lateCgroupOK(cfg, cloneFlags, joins) {
		sp.lateCgroup = func() (*os.File, []nsenterCgroup, error) {
			if err := makeCgroup(); err != nil || born == nil {
				return nil, nil, err
			}
			return born.dir, born.tasks, nil
		}
	} else {
		err := makeCgroup()
		if born != nil {
			sp.cgroup, sp.cgroupTasks = born.dir, born.tasks
		}
		if err != nil {
			if early != nil {
				early.destroyBestEffort()
			}
			return nil, err
		}
	}
	child, err := sp.start()
	if born != nil {
		// The stage has its copies (or is gone).
		born.closeFiles()
	}
	if err != nil {
		if early != nil {
			// Nothing is in it: the stage and what it forked are dead.
			early.destroyBestEffort()
		}
		return nil, err
	}
	p := &initProcess{spawned: child, created: time.Now().UTC(), owner: ownerName(), cgroup: early}
	defer func() {
		if retErr == nil {
			p.reap()
			return
		}
		if p.cgroup != nil {
			// init died setting up (the sync socket's error says only
			// that): the cgroup says whether its memory limit did it.
			if n, err := p.cgroup.oomKills(); err == nil && n > 0 {
				retErr = fmt.Errorf("the container's init was killed by the OOM killer while it set the container up: the memory limit is too small for it: raise it: %w", retErr)
			}
		}
		p.abort()
		p.net.close()
		closeFiles(p.held)
		p.held = nil
		if p.cgroup != nil {
			// Only now: a cgroup cannot go while init is in it.
			p.cgroup.destroyBestEffort()
		}
	}()
	ic.ExeFd = child.exeFd

	// init unshares its cgroup namespace as soon as it has the config, so
	// it must be in its cgroup (limits set) before the config is sent.
	switch {
	case child.inCgroup:
	case early != nil:
		// clone3 could not start the stage in the cgroup: move init.
		beforeCgroupMove(p.pid)
		if p.cgroup, err = early.join(id, p.pid); err != nil {
			return nil, err
		}
	case !bornOK:
		beforeCgroupMove(p.pid)
		if p.cgroup, err = applyCgroup(id, cfg, r.cgroupRootless(), p.pid, opts.Log); err != nil {
			return nil, err
		}
	}

	if p.cgroup == nil && r.cgroupRootless() {
		if ns, ok := cfg.NamespaceOf(NEWPID); !ok || ns.Path != "" {
			// runc's warning, which its suite looks for, with our reason.
			orNop(opts.Log).Warnf("Creating a rootless container with no cgroup and no private pid namespace. " +
				"Such configuration is strongly discouraged: its processes are found through exec's records " +
				"and parent links only, so one that leaves its parent escapes kill --all and delete")
		}
	}

	if err := moveNetDevicesTo(p.pid, cfg.NetDevices); err != nil {
		return nil, err
	}

	srcs, err := openMountSources(cfg, r.Rootless, p.pid)
	if err != nil {
		return nil, err
	}
	defer srcs.close()
	ic.MountSources, ic.LateSources = srcs.index, srcs.late

	// The filter compiled here (or found in the state root's cache) is
	// what init installs; when the compile fails here, init compiles it
	// and reports the error as it does without the cache.
	if cfg.Seccomp != nil {
		if prog, err := compileSeccompCached(r.Root, cfg.Seccomp); err == nil {
			ic.SeccompFilter = encodeSeccompFilter(prog.filter)
			// init installs the program as it is: of the profile, it
			// needs only what decides how (the rules are most of the
			// message, and decoding them most of init's start).
			slim := *cfg
			slim.Seccomp = cfg.Seccomp.installOnly()
			ic.Config = &slim
		}
	}
	ic.State = ociState(id, cfg, Creating, p.pid, p.created, p.owner)
	state := marshalState(ic.State)
	if err := child.sock.sendConfig(ic); err != nil {
		return nil, err
	}
	if err := sendMountSources(child.sock, srcs); err != nil {
		return nil, err
	}
	if err := configSent(p); err != nil {
		return nil, err
	}
	err = child.serve(func(m syncMsg) (bool, error) {
		switch m.Type {
		case syncHooks:
			// Prestart (the deprecated alias) runs first, under its own
			// name in errors, as in runc.
			err := runHooks("prestart", cfg.Hooks.Prestart, state)
			if err == nil {
				err = runHooks("createRuntime", cfg.Hooks.CreateRuntime, state)
			}
			if err != nil {
				_ = child.sock.send(syncMsg{Type: syncError, Error: err.Error()})
				return false, err
			}
			return false, child.sock.send(syncMsg{Type: syncHooksDone})
		case syncSeccompFd:
			return false, deliverSeccompFd(child.sock, cfg.Seccomp, state)
		case syncMountSource:
			tree, err := lateMountSource(cfg, srcs.late, m.Source, p.pid)
			if err != nil {
				_ = child.sock.send(syncMsg{Type: syncError, Error: err.Error()})
				return false, err
			}
			defer tree.Close()
			if err := child.sock.send(syncMsg{Type: syncMountSource}); err != nil {
				return false, err
			}
			return false, sendMountSources(child.sock, &mountSources{files: []*os.File{tree}})
		case syncNetFds:
			if p.net != nil || cfg.allowlist() == nil {
				return false, errors.New("sync: unexpected network descriptors from init")
			}
			p.net, err = recvNetFiles(child.sock, m.Net, idMapsOf(cfg))
			return false, err
		case syncHeldFds:
			if !opts.holdRefs || m.Held < 1 || m.Held > maxHeldFds {
				return false, fmt.Errorf("sync: unexpected %d descriptors to hold from init", m.Held)
			}
			fds, err := recvFds(child.sock, m.Held)
			if err != nil {
				return false, err
			}
			for _, fd := range fds {
				p.held = append(p.held, os.NewFile(uintptr(fd), "held by "+id))
			}
			return false, nil
		case syncReady:
			return true, nil
		}
		return false, fmt.Errorf("sync: unexpected message %q from init", m.Type)
	})
	if errors.Is(err, errSyncEOF) {
		return nil, errors.New("container init exited during set-up")
	}
	if err != nil {
		return nil, err
	}
	// pids.max only now that init's setup is done (see lateResources).
	// Its program cannot have started: that takes `start`, which needs
	// the state this create has not committed yet, and every path to the
	// program's execve (the Go init, the waiter) waits for it.
	if err := p.cgroup.setLate(); err != nil {
		return nil, err
	}
	if opts.holdRefs {
		// The same open file as init's: its last close is then ours.
		fd, err := unix.FcntlInt(exe.Fd(), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return nil, fmt.Errorf("hold the runtime binary's file: %w", err)
		}
		p.held = append(p.held, os.NewFile(uintptr(fd), "runtime binary for "+id))
	}
	return p, nil
}

// beforeCgroupMove is called with a pid (init's, or an exec'd process's)
// before the runtime moves it into the container's cgroup, which it does
// only where the process could not be born there (see cgroupBeforeInit):
// a variable so that a test can tell.
var beforeCgroupMove = func(pid int) {}

// namespaceFlags splits the config's namespaces into those to create and
// those to join.
func namespaceFlags(cfg *Config) (uintptr, []nsenter.Join, error) {
	var flags uintptr
	var joins []nsenter.Join
	for _, ns := range cfg.Namespaces {
		kind, flag, ok := nsenter.Kind(string(ns.Type))
		if !ok {
			return 0, nil, fmt.Errorf("namespace type %q is not supported", ns.Type)
		}
		if ns.Path == "" {
			flags |= flag
		} else {
			joins = append(joins, nsenter.Join{Kind: kind, Path: ns.Path})
		}
	}
	// A type left out is the runtime's own (a mount namespace too: see
	// rootfs_shared_linux.go).
	if err := checkSharedMountNS(cfg); err != nil {
		return 0, nil, err
	}
	return flags, joins, nil
}

// writeIDMaps writes the uid and gid maps of pid's new user namespace: with
// root, directly; rootless, directly when the map is just our own ids, and
// through the setuid newuidmap/newgidmap (ranges from /etc/subuid) otherwise.
func writeIDMaps(pid int, cfg *Config, rootless bool) error {
	if len(cfg.UIDMappings) == 0 || len(cfg.GIDMappings) == 0 {
		return errors.New("a user namespace needs uidMappings and gidMappings")
	}
	if !rootless {
		if err := writeMapFile(pid, "uid_map", cfg.UIDMappings); err != nil {
			return err
		}
		return writeMapFile(pid, "gid_map", cfg.GIDMappings)
	}
	if isSelfMap(cfg.UIDMappings, os.Geteuid()) {
		if err := writeMapFile(pid, "uid_map", cfg.UIDMappings); err != nil {
			return err
		}
	} else if err := runIDMapTool("newuidmap", pid, cfg.UIDMappings); err != nil {
		return err
	}
	if isSelfMap(cfg.GIDMappings, os.Getegid()) {
		// An unprivileged process may write gid_map only after denying
		// setgroups(2) (user_namespaces(7)).
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/setgroups", pid), []byte("deny"), 0); err != nil {
			return fmt.Errorf("write setgroups: %w", err)
		}
		return writeMapFile(pid, "gid_map", cfg.GIDMappings)
	}
	return runIDMapTool("newgidmap", pid, cfg.GIDMappings)
}

func isSelfMap(m []IDMap, id int) bool {
	return len(m) == 1 && m[0].Size == 1 && int(m[0].HostID) == id
}

func formatMap(maps []IDMap) string {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "%d %d %d\n", m.ContainerID, m.HostID, m.Size)
	}
	return b.String()
}

func writeMapFile(pid int, name string, maps []IDMap) error {
	path := fmt.Sprintf("/proc/%d/%s", pid, name)
	if err := os.WriteFile(path, []byte(formatMap(maps)), 0); err != nil {
		return fmt.Errorf("write %s %q: %w", name, strings.TrimSpace(formatMap(maps)), err)
	}
	return nil
}

func runIDMapTool(tool string, pid int, maps []IDMap) error {
	path, err := lookPathHost(tool)
	if err != nil {
		return fmt.Errorf("rootless id mapping %q needs %s (Debian package uidmap) and ranges in /etc/sub%cid: %w",
			strings.TrimSpace(formatMap(maps)), tool, tool[3], err)
	}
	args := []string{strconv.Itoa(pid)}
	for _, m := range maps {
		args = append(args, strconv.FormatUint(uint64(m.ContainerID), 10), strconv.FormatUint(uint64(m.HostID), 10), strconv.FormatUint(uint64(m.Size), 10))
	}
	out, err := execOutput(path, args...)
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, strings.TrimSpace(out))
	}
	return nil
}

// maxHeldFds bounds what init may hand over to hold (sendHeld).
const maxHeldFds = 16
