package libbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/containerd/console"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// Init is the container side of create: the re-executed binary runs it
// (`nanobox-runc init`) after the nsenter stage has put it in the
// container's namespaces. On success it ends in execve of the user program
// and never returns; on failure it reports the error to the parent and
// returns nil, or returns the error if the parent cannot be told.
func Init() error {
	// Everything from here to execve must happen on one thread: credentials,
	// capabilities, no_new_privs and the cwd are per-thread in the kernel.
	runtime.LockOSThread()
	fd, err := strconv.Atoi(os.Getenv(nsenter.EnvInitPipe))
	if err != nil {
		return fmt.Errorf("init: %s is not set: this command is run by the runtime itself", nsenter.EnvInitPipe)
	}
	os.Clearenv()
	sock := &syncSocket{f: os.NewFile(uintptr(fd), "sync")}
	m, err := sock.recv()
	if errors.Is(err, errSyncEOF) {
		// The parent gave up before sending the config (a cgroup limit
		// it could not set) and reports why itself.
		return nil
	}
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	switch m.Type {
	case syncConfig:
		if m.Config != nil {
			forwardLogs(sock, m.Config.LogLevel)
			logrus.Debugf("init: setting up container %s, pid %d (child process in init())", m.Config.ID, os.Getpid())
		}
		err = initContainer(sock, m.Config)
	case syncExec:
		if m.Exec != nil {
			forwardLogs(sock, m.Exec.LogLevel)
			logrus.Debugf("exec: pid %d is in the container's namespaces (child process in init())", os.Getpid())
		}
		err = initExec(sock, m.Exec)
	case syncNetListen:
		if err = initNetListen(sock, m.Net); err == nil {
			return nil
		}
	case syncMountOp:
		err = initMountOp(sock, m.MountOp)
	default:
		err = fmt.Errorf("init: unexpected first message %q", m.Type)
	}
	// Both return only on failure. The parent reports the error; it is
	// returned only when it could not be sent there. A parent that has
	// closed its end gave up on init and reports its own error (the one it
	// sent here, or why it stopped listening): printing ours too would be
	// a second line, or "peer closed the sync socket".
	if serr := sock.send(syncMsg{Type: syncError, Error: err.Error(), ErrorKind: errorKindOf(err)}); serr != nil {
		if errors.Is(serr, unix.EPIPE) || errors.Is(serr, unix.ECONNRESET) {
			return nil
		}
		return err
	}
	return nil
}

// newCgroupNS makes the cgroup namespace, when asked for: init is in the
// container's cgroup when it has its config, so its root is that cgroup.
func newCgroupNS(ic *initConfig) error {
	if ic.NewCgroupNS {
		ic.NewCgroupNS = false
		// Per-thread (nsproxy), so allowed in a multi-threaded process;
		// the locked thread is the one that execs, and children inherit it.
		if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
			return fmt.Errorf("unshare cgroup namespace: %w", err)
		}
	}
	return nil
}

func initContainer(sock *syncSocket, ic *initConfig) error {
	if ic == nil || ic.Config == nil {
		return errors.New("init: no config received")
	}
	cfg := ic.Config
	// A deferred init (no program in the config: deferred_linux.go) keeps
	// the binary, close-on-exec, in case its program is the pause.
	deferred := len(cfg.Process.Args) == 0
	if !deferred {
		_ = unix.Close(ic.ExeFd)
	}
	// First of all, so that no hook and no later step can hand one of the
	// runtime's descriptors on, and so that nothing of it is left to do
	// under a seccomp filter that may deny close_range.
	if err := closeExtraFDs(ic.PreserveFds); err != nil {
		return err
	}
	if err := setParentDeathSignal(cfg.ParentDeathSignal); err != nil {
		return err
	}
	// oom_score_adj is already set: the nsenter stage wrote it before any
	// namespace (startInit passes it in the bootstrap message), where a
	// user namespace could not keep it from being written.
	cfg.Process.OOMScoreAdj = nil
	// Nobody in the container may ptrace init or open its /proc files
	// (CVE-2019-5736 hardening); execve of the user program resets this.
	if err := setDumpable(false); err != nil {
		return err
	}
	if err := newCgroupNS(ic); err != nil {
		return err
	}
	if !cfg.NoNewKeyring {
		if err := joinSessionKeyring(ic.ID); err != nil {
			return err
		}
	}
	// The rootfs is set up in the container's mount namespace, made for
	// it or joined by path (as runc does: a joined namespace is the
	// container's too, not a root to run in as it is), or else under the
	// rootfs in the runtime's own namespace (rootfs_shared_linux.go).
	mountNS := cfg.hasMountNS()
	var rootfs string
	received, err := recvMountSources(sock, ic.MountSources)
	if err != nil {
		return err
	}
	trees := &mountTrees{files: received, late: ic.LateSources, sock: sock}
	if mountNS {
		rootfs, err = prepareRootfs(cfg, trees)
	} else {
		rootfs, err = prepareSharedRootfs(cfg, trees)
	}
	trees.close()
	var entry *entryError
	if errors.As(err, &entry) {
		return err // names the mount itself
	}
	if err != nil {
		return fmt.Errorf("prepare rootfs: %w", err)
	}
	if len(cfg.Hooks.Prestart)+len(cfg.Hooks.CreateRuntime) > 0 {
		if err := sock.send(syncMsg{Type: syncHooks}); err != nil {
			return err
		}
		if _, err := sock.expect(syncHooksDone); err != nil {
			return err
		}
	}
	// createContainer hooks run in the container's mount namespace before
	// pivot_root (OCI runtime spec, "Lifecycle"), in the container's root
	// directory, as runc runs them.
	if len(cfg.Hooks.CreateContainer) > 0 {
		if err := unix.Chdir(rootfs); err != nil {
			return fmt.Errorf("chdir to rootfs %s for createContainer hooks: %w", rootfs, err)
		}
		if err := runHooks("createContainer", cfg.Hooks.CreateContainer, marshalState(ic.State)); err != nil {
			return err
		}
	}
	if mountNS {
		if err := pivotRootfs(cfg); err != nil {
			return fmt.Errorf("pivot root: %w", err)
		}
	} else if err := chrootRootfs(rootfs); err != nil {
		return err
	}
	if ic.NewUTSNS {
		if cfg.Hostname != "" {
			if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
				return fmt.Errorf("set hostname %q: %w", cfg.Hostname, err)
			}
		}
		if cfg.Domainname != "" {
			if err := unix.Setdomainname([]byte(cfg.Domainname)); err != nil {
				return fmt.Errorf("set domainname %q: %w", cfg.Domainname, err)
			}
		}
	}
	if ic.NewNetNS {
		if err := loopbackUp(); err != nil {
			return err
		}
	}
	if err := initNetwork(sock, cfg, ic.NewNetNS); err != nil {
		return err
	}
	if mountNS {
		if err := finalizeRootfs(cfg); err != nil {
			return fmt.Errorf("finalize rootfs: %w", err)
		}
	} else if err := writeSysctls(cfg.Sysctl); err != nil {
		return fmt.Errorf("finalize rootfs: %w", err)
	}
	p := &cfg.Process
	if p.Terminal && ic.ConsoleSocketFd < 0 {
		return errors.New("process.terminal is true but no console socket was given: use --console-socket")
	}
	if rootfs != "/" {
		// runc creates a missing cwd; after pivot_root (or chroot) the
		// path can only resolve inside the container.
		if err := os.MkdirAll(p.Cwd, 0o755); err != nil {
			return fmt.Errorf("create cwd %s: %w", p.Cwd, err)
		}
	}
	if err := enterSession(ic.ControllingTTY, ic.NewSession, ic.ConsoleSocketFd); err != nil {
		return err
	}
	pe, err := prepareProcess(p, ic.ConsoleSocketFd, mountNS, ic.Rootless,
		containerSettings{cfg.Seccomp, cfg.Landlock, cfg.Personality, cfg.MemoryPolicy, ic.SeccompFilter})
	if err != nil {
		return err
	}
	// Again: a change of uid or gid cleared it. The ready message below
	// fails if the parent is already gone.
	if err := setParentDeathSignal(cfg.ParentDeathSignal); err != nil {
		return err
	}
	// Whenever the filter is installed, the log reaches the runtime only
	// until ready.
	pe.filters.logSeccompFlags()
	if pe.filters.listener() {
		// The notify fd can only reach the runtime before ready.
		if err := pe.filters.installSeccomp(sock); err != nil {
			return err
		}
	}
	if ic.SendHeld {
		if err := sendHeld(sock); err != nil {
			return err
		}
	}
	// A sandbox with a built-in profile applies its filters once it is
	// ready, while the runtime records the state and starts it
	// (deferred_linux.go): a program given at create gains that overlap
	// too.
	early := !ic.Pause && ic.EarlyFilters && pe.as == nil
	if early && deferred && ic.Waiter && len(cfg.Hooks.StartContainer) == 0 && (pe.filters == nil || pe.filters.landlockFd < 0) {
		// The waiter sends ready (waiter_linux.go); when it cannot run,
		// init goes on here, its filters applied.
		early = false
		if err := pe.filters.apply(nil); err != nil {
			if err := sock.send(syncMsg{Type: syncReady}); err != nil {
				return err
			}
			sock.Close()
			reportStartFailure(ic.FifoFd, err)
			os.Exit(1)
		}
		if waiterAllowed() {
			_ = execWaiter(sock, ic.FifoFd, ic.ExeFd, p.Cwd, pe.env)
		}
	}
	if r := cfg.Resources; r != nil && r.PidsLimit != nil {
		quiesceRuntime()
	}
	if ic.Rootless && !early && cfg.Seccomp == nil && cfg.Landlock == nil && p.AppArmorProfile == "" {
		// An unprivileged runtime opens a created container's namespaces
		// through /proc/PID/ns, which a non-dumpable init keeps from it
		// (its memory belongs to the host's user namespace): exec into
		// the container before start could not work, and with runc it
		// does (runc's init is dumpable here). The credentials and
		// capabilities are final (no change resets the flag now), the
		// kernel lets only a process with the same uid and no fewer
		// capabilities ptrace it, and init's binary stays sealed
		// (sealedSelfExe): with no filter or profile still to apply at
		// start, such a process gains nothing through init. Under a
		// privileged runtime, and whenever a seccomp, Landlock or
		// AppArmor confinement is still to come, init stays out of reach
		// until its program executes.
		if err := setDumpable(true); err != nil {
			return err
		}
	}
	// runc's wording for this point (its suite and log readers look for
	// it): the last message before ready.
	logrus.Debugf("init: closing the pipe to signal completion")
	if err := sock.send(syncMsg{Type: syncReady}); err != nil {
		return err
	}
	sock.Close()
	if early {
		// Off the critical path of a start: see deferred_linux.go.
		if err := pe.filters.apply(nil); err != nil {
			reportStartFailure(ic.FifoFd, err)
			os.Exit(1)
		}
	}
	start, err := waitForStart(fifoReader(ic.FifoFd), deferred && !ic.Pause)
	if err != nil {
		// The parent is gone; nobody reads errors any more.
		os.Exit(1)
	}
	// From here on the one to tell is `start`, through the exec fifo.
	var state []byte
	if len(cfg.Hooks.StartContainer) > 0 {
		st := *ic.State
		st.Status = Created
		state = marshalState(&st)
	}
	if deferred {
		err = pe.setProgram(start, ic.Pause, ic.ExeFd, p.Cwd)
	}
	if err == nil {
		err = pe.run(nil, cfg.Hooks.StartContainer, state)
	}
	reportStartFailure(ic.FifoFd, err)
	os.Exit(1)
	return nil
}

// quiesceRuntime keeps the Go runtime from starting another thread from
// here to execve: the parent writes pids.max once it reads ready (see
// lateResources in cgroups_linux.go), maybe below the threads init already
// has, and a thread the runtime then failed to start would kill init while
// it waits for start. With one P and no garbage collection nothing runs
// beside init's own goroutine: when it blocks (reading the exec fifo), the
// P goes to one of the runtime's idle threads (there is one from its
// start, when the locked main goroutine waited for the collector's
// goroutines), never to a new one.
func quiesceRuntime() {
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
}

// pendingExec is a process set up and ready to execute its program: what
// is left is the filters (filters_linux.go), the startContainer hooks (for
// init) and execve.
type pendingExec struct {
	filters   *filters
	path      string
	args, env []string
	// exeFd, when >= 0, is the runtime's own binary to execute instead of
	// path: the pause of a persistent sandbox (deferred_linux.go).
	exeFd int
	// as is the process's RLIMIT_AS, set as late as possible (see run).
	as *Rlimit
}

// run applies the filters, runs the startContainer hooks under them and
// executes the program; it returns only on failure. sock carries a notify
// fd to the runtime (exec only).
func (pe *pendingExec) run(sock *syncSocket, hooks []Hook, state []byte) error {
	// RLIMIT_AS is set here, not with the other rlimits, and execve then
	// needs no memory of the Go runtime: this process's address space is
	// already larger than most such limits (the Go runtime reserves its
	// heap arenas up front, about 1.5 GiB), and below it every mmap fails,
	// which aborts the runtime ("fatal error: runtime: cannot allocate
	// memory") whenever it needs a span or a thread (golang/go#69105).
	// Before the filters, which may deny setrlimit, as with the others.
	var ex *preparedExecve
	if pe.as != nil {
		if pe.exeFd < 0 {
			var err error
			if ex, err = prepareExecve(pe.path, pe.args, pe.env); err != nil {
				return err
			}
		}
		// And from here on the runtime must not grow: one P and no GC,
		// so that the scheduler starts no new thread (a new M is an
		// allocation, and under load one was started while the filters
		// were installed) and no collection maps memory.
		runtime.GOMAXPROCS(1)
		debug.SetGCPercent(-1)
		if err := setRlimit(*pe.as); err != nil {
			return err
		}
	}
	if err := pe.filters.apply(sock); err != nil {
		return err
	}
	if err := runHooks("startContainer", withDefaultEnv(hooks, pe.env), state); err != nil {
		return err
	}
	switch {
	case pe.exeFd >= 0:
		return execFd(pe.exeFd, pe.args, pe.env)
	case ex != nil:
		return ex.exec()
	}
	return finalExec(pe.path, pe.args, pe.env)
}

// maxStartError bounds the error text init leaves in the exec fifo: a
// write of at most PIPE_BUF bytes into the empty pipe is atomic and never
// blocks.
const maxStartError = 4096

// reportStartFailure leaves err in the exec fifo, where `start` reads it
// once init is gone (container_linux.go): after the start byte was read
// the pipe is empty, and start's own open end keeps the data in it after
// init exits. When even that fails, stderr is the only place left.
func reportStartFailure(fifoFd int, err error) {
	msg := err.Error()
	if kind := errorKindOf(err); kind != "" {
		// A missing or non-executable program of a deferred init keeps its
		// kind (startFailure parses it back).
		msg = startErrorKindMark + kind + startErrorKindMark + msg
	}
	if len(msg) > maxStartError {
		msg = msg[:maxStartError]
	}
	if _, werr := unix.Write(fifoFd, []byte(msg)); werr != nil {
		fmt.Fprintln(os.Stderr, "nanobox-runc init:", err)
	}
}

// containerSettings are what every process of the container gets, init
// and each exec'd one alike.
type containerSettings struct {
	seccomp      *Seccomp
	landlock     *Landlock
	personality  *Personality
	memoryPolicy *MemoryPolicy
	// seccompFilter is seccomp compiled by the runtime (nil: compile it
	// here).
	seccompFilter []byte
}

// prepareProcess is what init and an exec'd process share before execve:
// the terminal, the filters (after the mounts: Landlock paths are container
// paths; before the credentials change: see filters_linux.go), credentials,
// capabilities and the cwd, and the program's path, resolved as the
// process's own user so that a missing or non-executable program fails
// create or exec, as in runc.
func prepareProcess(p *Process, consoleFd int, bindConsole, rootless bool, cs containerSettings) (_ *pendingExec, retErr error) {
	if p.Terminal {
		if err := setupConsole(consoleFd, p, bindConsole); err != nil {
			return nil, fmt.Errorf("set up console: %w", err)
		}
	} else if consoleFd >= 0 {
		_ = unix.Close(consoleFd)
	}
	// Both survive fork and execve; set while no filter may deny them.
	if cs.personality != nil {
		if err := setPersonality(*cs.personality); err != nil {
			return nil, err
		}
	}
	if cs.memoryPolicy != nil {
		if err := setMemoryPolicy(cs.memoryPolicy); err != nil {
			return nil, err
		}
	}
	// Before the credentials change and the filters, as runc does: the
	// profile confines the program from its execve on.
	if err := applyAppArmorProfile(p.AppArmorProfile); err != nil {
		return nil, err
	}
	f, err := prepareFiltersCompiled(p, cs.seccomp, cs.seccompFilter, cs.landlock)
	if err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			f.close()
		}
	}()
	env, finalCaps, err := setupProcess(p, rootless, f.needsSysAdmin())
	if err != nil {
		return nil, err
	}
	f.finalCaps = finalCaps
	if err := checkCwd(p.Cwd); err != nil {
		return nil, err
	}
	pe := &pendingExec{filters: f, args: p.Args, env: env, exeFd: -1}
	for i := range p.Rlimits {
		if p.Rlimits[i].Type == unix.RLIMIT_AS {
			pe.as = &p.Rlimits[i]
		}
	}
	if len(p.Args) == 0 {
		// A deferred init: the program comes with start.
		return pe, nil
	}
	if pe.path, err = lookPath(p.Args[0], env, p.Cwd); err != nil {
		return nil, err
	}
	return pe, nil
}

// checkCwd makes sure the cwd setupProcess entered is inside the
// container's root: a cwd reached through a leaked host fd
// (/proc/self/fd/N) reads as "(unreachable)" (CVE-2024-21626).
func checkCwd(cwd string) error {
	wd, err := unix.Getwd()
	if err != nil {
		return fmt.Errorf("cwd %q is outside the container: %w", cwd, err)
	}
	if !strings.HasPrefix(wd, "/") {
		return fmt.Errorf("cwd %q is outside the container", cwd)
	}
	return nil
}

// waitForStart blocks until `start` writes into the exec fifo, which init
// holds open read-write (so the read cannot see EOF): the start byte, or
// for a deferred init the start message with its program
// (deferred_linux.go). The fd stays open, close-on-exec: `start` waits for
// it to close at execve.
func waitForStart(fifo io.Reader, deferred bool) (*startMessage, error) {
	// The fd is close-on-exec (closeExtraFDs): a startContainer hook that
	// lingered would otherwise keep `start` waiting.
	var b [1]byte
	n, err := fifo.Read(b[:])
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read exec fifo: %w", err)
	}
	if n != 1 {
		return nil, errors.New("read exec fifo: no start byte")
	}
	if b[0] != startWithProgram {
		return nil, nil
	}
	if !deferred {
		return nil, errors.New("read exec fifo: a program was given to an init that has one")
	}
	return readStartMessage(fifo)
}

// setupConsole makes a pty in the container's devpts, sends the master over
// the console socket and makes the slave init's controlling terminal and
// stdio.
func setupConsole(socketFd int, p *Process, newMountNS bool) error {
	pty, slavePath, err := console.NewPty()
	if err != nil {
		return fmt.Errorf("open pty: %w", err)
	}
	defer pty.Close()
	if p.ConsoleWidth > 0 || p.ConsoleHeight > 0 {
		if err := pty.Resize(console.WinSize{Width: uint16(p.ConsoleWidth), Height: uint16(p.ConsoleHeight)}); err != nil {
			return fmt.Errorf("set console size: %w", err)
		}
	}
	if newMountNS {
		if err := mountConsole(slavePath); err != nil {
			return err
		}
	}
	rights := unix.UnixRights(int(pty.Fd()))
	if err := unix.Sendmsg(socketFd, []byte(pty.Name()), rights, nil, 0); err != nil {
		return fmt.Errorf("send pty master over console socket: %w", err)
	}
	_ = unix.Close(socketFd)
	slave, err := unix.Open(slavePath, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open pty slave %s: %w", slavePath, err)
	}
	// The pty was just made for this process: give it to the process's
	// user, who could not reopen /dev/pts/N (or /dev/stdin) otherwise.
	if err := unix.Fchown(slave, int(p.User.UID), -1); err != nil {
		return fmt.Errorf("chown pty slave %s to uid %d: %w", slavePath, p.User.UID, err)
	}
	for i := 0; i < 3; i++ {
		if err := unix.Dup3(slave, i, 0); err != nil {
			return fmt.Errorf("dup pty slave: %w", err)
		}
	}
	_ = unix.Close(slave)
	if _, err := unix.Setsid(); err != nil {
		return fmt.Errorf("setsid: %w", err)
	}
	if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, 0); err != nil {
		return fmt.Errorf("make pty the controlling terminal: %w", err)
	}
	return nil
}

// loopbackUp brings up lo in a new network namespace, as runc does: a
// container with no network still reaches its own 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring up lo: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring up lo: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring up lo: get flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring up lo: %w", err)
	}
	return nil
}

// joinSessionKeyring gives init a new session keyring of its own, as runc
// does unless --no-new-keyring: otherwise the container would share the
// caller's session keyring and the keys in it. Kernels without keyrings
// (ENOSYS) are skipped.
func joinSessionKeyring(id string) error {
	key, err := unix.KeyctlJoinSessionKeyring("_ses." + id)
	if errors.Is(err, unix.ENOSYS) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("join a new session keyring (or use --no-new-keyring): %w", err)
	}
	// Searchable and viewable by its possessor and user, as in runc
	// (perm |= 0x080f0000).
	desc, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, key)
	if err != nil {
		return fmt.Errorf("describe session keyring: %w", err)
	}
	f := strings.SplitN(desc, ";", 5)
	if len(f) < 4 {
		return fmt.Errorf("describe session keyring: unexpected %q", desc)
	}
	perm, err := strconv.ParseUint(f[3], 16, 32)
	if err != nil {
		return fmt.Errorf("describe session keyring: permissions %q: %w", f[3], err)
	}
	if err := unix.KeyctlSetperm(key, uint32(perm)|0x080f0000); err != nil {
		return fmt.Errorf("set session keyring permissions: %w", err)
	}
	return nil
}

// sendHeld sends the parent what it holds for a pooled sandbox
// (CreateOpts.holdRefs), so that the last reference to each is dropped at
// teardown, not on the program's critical path:
//   - init's mount namespace: the program (init's successor) holds the
//     last reference otherwise, and its exit unmounts the whole tree and
//     waits for an RCU grace period before wait4 returns. init may open
//     it whether or not it is dumpable, which an unprivileged parent could
//     not through /proc/PID/ns.
//   - its descriptors on procfs: the private procfs instance pathrs-lite
//     mounted (detached) and caches for the life of the process, whose
//     close-on-exec at the program's execve would dissolve that mount,
//     again with a grace period, before the program's first instruction.
//
// Without a /proc to open them from, nothing is sent: holding them only
// makes a run faster.
func sendHeld(sock *syncSocket) error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	var fds []int
	defer func() { closeFds(fds) }()
	if fd, err := unix.Open("/proc/self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		fds = append(fds, fd)
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 3 {
			continue
		}
		var st unix.Statfs_t
		// The directory ReadDir read is closed by now: its number fails
		// here, or names a descriptor opened since (the namespace's).
		if unix.Fstatfs(n, &st) != nil || st.Type != unix.PROC_SUPER_MAGIC {
			continue
		}
		if dup, err := unix.FcntlInt(uintptr(n), unix.F_DUPFD_CLOEXEC, 3); err == nil {
			fds = append(fds, dup)
		}
	}
	if len(fds) == 0 {
		return nil
	}
	if err := sock.send(syncMsg{Type: syncHeldFds, Held: len(fds)}); err != nil {
		return err
	}
	return sendFds(sock, fds)
}

// withDefaultEnv gives the startContainer hooks that set no env the
// container process's environment, as runc's always have (runtime-spec
// leaves it open; hooks written for runc read the process's variables).
func withDefaultEnv(hooks []Hook, env []string) []Hook {
	out := make([]Hook, len(hooks))
	for i, h := range hooks {
		if h.Env == nil {
			h.Env = env
		}
		out[i] = h
	}
	return out
}
