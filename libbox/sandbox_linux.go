package libbox

// The sandbox engine: New validates Options and decides how each limit is
// enforced on this host; Run creates a container from them, starts it,
// supervises it (wall time, CPU time, output, the caller's context),
// collects the report and tears everything down. Each step is its own
// method of instance, so that long-lived sandboxes can reuse them.
//
// State: every sandbox is a container under a Runtime root of its own
// (DefaultStateRoot), with a generated id ("sb-" and 16 hex digits). After
// Run nothing is left: no state directory, cgroup, mount or process; if the
// program that called Run is killed, the sandbox's init gets SIGKILL
// (Config.ParentDeathSignal), and the next New in the same state root
// removes what is left of it.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// Sandbox runs programs in fresh sandboxes made from one set of Options.
// It is safe for concurrent use: every Run gets a sandbox of its own, and
// nothing carries over from one run to the next.
type Sandbox struct {
	opts    Options
	rt      *Runtime
	plan    *limitPlan
	cgroup  cgroupProbe
	layout  *hostLayout
	binds   []Bind
	seccomp *Seccomp
	ids     idMapping
	// owner identifies this process in the sandboxes' state, so that a
	// later New can tell the sandboxes of a dead program.
	owner string
	// landlock is the fate of Options.Landlock ("" without one).
	landlock LandlockStatus
	rootless bool
	// specRootfs, for ContainerConfig, is the bundle's rootfs: the
	// system directories are then bound into it, symlinks as binds.
	specRootfs string

	// liveMu guards live, the persistent instance (Start), and final, its
	// report once closed (persistent_linux.go).
	liveMu sync.Mutex
	live   *session
	final  *Report
	// net is the allowlist's state (sandbox_network_linux.go), nil in
	// the other modes.
	net *sandboxNet
}

// Result is what a Run returns: the program's output, its exit status and
// the execution report.
type Result struct {
	// Stdout and Stderr are the program's output, at most Limits.Output
	// bytes together (DefaultOutputCap when no limit is set).
	Stdout, Stderr []byte
	// ExitCode is the program's exit status, 128+N when killed by signal
	// N, or for a set-up error 125, 126 (not executable), 127 (not found).
	ExitCode int
	// Signal is the signal that killed the program, 0 if it exited.
	Signal unix.Signal
	// OutputTruncated is true when output was dropped.
	OutputTruncated bool
	Report          *Report
}

// DefaultOutputCap bounds what Run keeps of stdout and stderr when
// Limits.Output is not set: output beyond it is dropped (OutputTruncated),
// but the program is not killed for it.
const DefaultOutputCap = 64 * MB

// Owner annotation: "pid:starttime" of the process that ran the sandbox.
const sandboxOwnerAnnotation = "org.nanobox.sandbox.owner"

// Exit codes of a run that did not start, as shells and container engines
// use them.
const (
	ExitSetupError    = 125
	ExitNotExecutable = 126
	ExitNotFound      = 127
)

// DefaultStateRoot is where sandboxes keep their state when
// Options.StateRoot is not set: /run/nanobox-sandbox for root;
// $XDG_RUNTIME_DIR/nanobox-sandbox for other users (uid 0 of a user
// namespace included), or /tmp/nanobox-sandbox-UID without
// XDG_RUNTIME_DIR. It is separate from the
// OCI runtime's --root, so `nanobox-runc list` never shows sandboxes and
// their ids never collide with a container's.
func DefaultStateRoot() string {
	if !hostRootless() {
		return "/run/nanobox-sandbox"
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "nanobox-sandbox")
	}
	return filepath.Join(os.TempDir(), "nanobox-sandbox-"+strconv.Itoa(os.Geteuid()))
}

// New checks opts and the host: every field is validated, every mount
// source must exist, and every limit must be enforceable (or allowed to
// degrade). Errors name the field and the fix.
func New(opts Options) (*Sandbox, error) {
	s, err := prepare(opts, false)
	if err != nil {
		return nil, err
	}
	root := s.opts.StateRoot
	if root == "" {
		root = DefaultStateRoot()
	}
	if err := ensureStateRoot(root); err != nil {
		return nil, err
	}
	s.rt = &Runtime{Root: root, Rootless: s.rootless, Ephemeral: true}
	self, err := readProcStat(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("sandbox: read own process status: %w", err)
	}
	s.owner = fmt.Sprintf("%d:%d", os.Getpid(), self.StartTime)
	s.sweep()
	return s, nil
}

// prepare is New without the state root: the checks of opts against the
// host, and the plan of its limits (forSpec: for an OCI runtime that gets
// the cgroup limits, see ContainerConfig).
func prepare(opts Options, forSpec bool) (*Sandbox, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	rootless := hostRootless()
	s := &Sandbox{opts: opts, rootless: rootless}
	s.opts.Mounts = slices.Clone(opts.Mounts)
	s.opts.Tmpfs = slices.Clone(opts.Tmpfs)
	s.opts.Env = slices.Clone(opts.Env)
	s.opts.AllowDegraded = slices.Clone(opts.AllowDegraded)
	o := &s.opts
	if o.Namespaces.None {
		return nil, fmt.Errorf("sandbox options: %w", fieldError("namespaces.none", "the namespace-less mode is not supported by this version: run on a host with user namespaces (nanobox-runc sandbox --check says what is missing)"))
	}

	s.ids = idMapping{hostUID: uint32(os.Geteuid()), hostGID: uint32(os.Getegid())}
	if ns := o.Namespaces; ns.HostUID != nil || ns.HostGID != nil {
		if rootless {
			return nil, fmt.Errorf("sandbox options: %w", fieldError("namespaces.hostUID/hostGID", "only root may map the sandbox to other host ids: drop them"))
		}
		if ns.HostUID != nil {
			s.ids.hostUID = *ns.HostUID
		}
		if ns.HostGID != nil {
			s.ids.hostGID = *ns.HostGID
		}
	}

	for i, b := range o.Mounts {
		src, err := filepath.Abs(b.Source)
		if err != nil {
			return nil, fmt.Errorf("sandbox options: %w", &OptionError{Field: fmt.Sprintf("mounts[%d].source", i), Err: err})
		}
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("sandbox options: %w", &OptionError{Field: fmt.Sprintf("mounts[%d].source", i), Err: fmt.Errorf("%w: create it or fix the path", err)})
		}
		s.binds = append(s.binds, Bind{Source: src, Target: filepath.Clean(b.Target), ReadOnly: b.ReadOnly})
	}
	if o.Rootfs != "" {
		fi, err := os.Stat(o.Rootfs)
		if err != nil {
			return nil, fmt.Errorf("sandbox options: %w", &OptionError{Field: "rootfs", Err: err})
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("sandbox options: %w", fieldError("rootfs", "%s is not a directory", o.Rootfs))
		}
	} else {
		var err error
		if s.layout, err = scanHostLayout(); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}

	if p := o.Seccomp; p.Custom != nil {
		s.seccomp = copySeccomp(p.Custom)
	} else {
		var err error
		if s.seccomp, err = SandboxSeccomp(p.name()); err != nil {
			return nil, fmt.Errorf("sandbox options: %w", &OptionError{Field: "seccomp", Err: err})
		}
	}
	if o.Landlock != nil {
		rep, err := CheckLandlock(o.Landlock)
		if err != nil {
			return nil, fmt.Errorf("sandbox options: %w", err)
		}
		s.landlock = rep.Status
	}

	if err := s.initNetwork(); err != nil {
		return nil, err
	}
	s.cgroup = probeCgroup(rootless)
	var err error
	if s.plan, err = planLimits(o, rootless, s.cgroup, forSpec); err != nil {
		return nil, fmt.Errorf("sandbox options: %w", err)
	}
	return s, nil
}

// Options returns a copy of the sandbox's options.
func (s *Sandbox) Options() Options {
	o := s.opts
	o.Mounts = slices.Clone(o.Mounts)
	o.Tmpfs = slices.Clone(o.Tmpfs)
	o.Env = slices.Clone(o.Env)
	o.AllowDegraded = slices.Clone(o.AllowDegraded)
	o.Network = s.network()
	return o
}

// StateRoot is the directory holding this sandbox's state while it runs.
func (s *Sandbox) StateRoot() string { return s.rt.Root }

// ensureStateRoot creates root (and its parents) and checks that it is a
// directory of ours that nobody else may write: under /tmp another user
// could have made it first.
func ensureStateRoot(root string) error {
	if err := os.MkdirAll(root, 0o711); err != nil {
		return fmt.Errorf("sandbox: create state root %s: %w (set stateRoot to a directory you may write)", root, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(root, &st); err != nil {
		return fmt.Errorf("sandbox: state root %s: %w", root, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != uint32(os.Geteuid()) || st.Mode&0o022 != 0 {
		return fmt.Errorf("sandbox: state root %s must be a directory owned by uid %d and writable only by it: remove it, or set stateRoot elsewhere", root, os.Geteuid())
	}
	return nil
}

// sweep removes the sandboxes of programs that died without tearing them
// down (killed while a Run was in progress): their init died with them
// (parent-death signal), but a state directory, or a cgroup, may remain.
// The sandboxes of live programs, this one included, are left alone.
func (s *Sandbox) sweep() {
	ents, err := os.ReadDir(s.rt.Root)
	if err != nil {
		return
	}
	for _, e := range ents {
		id := e.Name()
		if !e.IsDir() || !strings.HasPrefix(id, "sb-") || ValidateID(id) != nil {
			continue
		}
		ctr, err := s.rt.Load(id)
		if err != nil {
			if errors.Is(err, ErrNotExist) {
				s.removeAbandoned(id)
			}
			continue
		}
		if ownerAlive(ctr.Config().Annotations[sandboxOwnerAnnotation]) {
			continue
		}
		_ = ctr.Delete(true)
	}
}

// removeAbandoned removes a state directory without state.json whose
// creator is gone: nobody holds its lock (a create in progress does), and
// it is not brand new (a create takes the lock right after the mkdir).
func (s *Sandbox) removeAbandoned(id string) {
	dir := filepath.Join(s.rt.Root, id)
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || time.Since(fi.ModTime()) < time.Minute {
		return
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return
	}
	if _, err := os.Lstat(filepath.Join(dir, stateFile)); errors.Is(err, fs.ErrNotExist) {
		_ = os.RemoveAll(dir)
	}
}

// ownerAlive reports whether the process "pid:starttime" still runs.
func ownerAlive(owner string) bool {
	pidS, startS, ok := strings.Cut(owner, ":")
	pid, err1 := strconv.Atoi(pidS)
	start, err2 := strconv.ParseUint(startS, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		// Not a sandbox of ours: leave it.
		return true
	}
	ps, err := readProcStat(pid)
	return err == nil && ps.StartTime == start && ps.State != 'Z' && ps.State != 'X'
}

// Run runs name with args in a fresh sandbox and waits for it. The result
// is returned whenever the sandbox could be set up, whatever the program
// did (its fate is in Result.Report.Status); the error is non-nil when the
// sandbox could not be set up (the Result then says setup-error, with exit
// code 125, 126 or 127: errors.Is(err, ErrProgramNotFound)...), or when
// ctx ended (the sandbox is killed, and the error is ctx's).
//
// The program's stdin is /dev/null; stdout and stderr are kept in memory,
// bounded by Limits.Output (or DefaultOutputCap).
func (s *Sandbox) Run(ctx context.Context, name string, args ...string) (*Result, error) {
	var stdout, stderr bytes.Buffer
	res, err := s.run(ctx, append([]string{name}, args...), s.bufferedIO(&stdout, &stderr))
	if res != nil {
		res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	}
	return res, err
}

// bufferedIO keeps a program's stdout and stderr in memory: at most
// Limits.Output bytes together, the program killed past it, or without a
// limit DefaultOutputCap bytes, the rest dropped and the result marked
// truncated.
func (s *Sandbox) bufferedIO(stdout, stderr *bytes.Buffer) runIO {
	capacity, kill := s.opts.Limits.Output, true
	if capacity == 0 {
		capacity, kill = DefaultOutputCap, false
	}
	out := newOutputCap(capacity, kill)
	return runIO{stdout: out.writer(stdout), stderr: out.writer(stderr), out: out}
}

// RunAttached is Run with the caller's own files as the program's stdio,
// as the CLI runs it: stdin, stdout and stderr are passed to the program as
// they are (nil means /dev/null), except that with Limits.Output set the
// runtime reads stdout and stderr itself and relays them to the given
// files through the cap. Result.Stdout and Result.Stderr stay empty.
func (s *Sandbox) RunAttached(ctx context.Context, stdin, stdout, stderr *os.File, name string, args ...string) (*Result, error) {
	rio := runIO{stdin: stdin, stdoutFile: stdout, stderrFile: stderr}
	if limit := s.opts.Limits.Output; limit != 0 {
		rio.out = newOutputCap(limit, true)
		rio.stdout = rio.out.writer(orDiscard(stdout))
		rio.stderr = rio.out.writer(orDiscard(stderr))
		rio.stdoutFile, rio.stderrFile = nil, nil
	}
	return s.run(ctx, append([]string{name}, args...), rio)
}

// orDiscard is f as a writer, or one that drops everything for nil.
func orDiscard(f *os.File) io.Writer {
	if f == nil {
		return io.Discard
	}
	return f
}

// runIO is where a run's stdio goes: files passed as they are (nil: the
// matching stdio of the caller for stdin, /dev/null... see run), or
// writers fed from pipes through the output cap.
type runIO struct {
	// holdRefs: CreateOpts.holdRefs, what is held in instance.held.
	holdRefs bool
	// waiter: CreateOpts.waiter.
	waiter bool
	stdin  *os.File
	stdout *capWriter
	stderr *capWriter
	// stdoutFile and stderrFile are passed to the program directly when
	// stdout/stderr are nil.
	stdoutFile, stderrFile *os.File
	out                    *outputCap
	// console and term, for a PTY (child_linux.go): the socket init sends
	// the master over, and its size.
	console *os.File
	term    *Terminal
	// controllingTTY: stdin is the caller's terminal, for the program to
	// make its controlling terminal.
	controllingTTY bool
	// detachedID names a detached sandbox (detach_linux.go): no owner, no
	// parent-death signal.
	detachedID string
	// pause: a sandbox with no program whose init starts the pause (a
	// persistent sandbox).
	pause bool
}

// run is Run with the stdio chosen by the caller (the CLI passes its own).
func (s *Sandbox) run(ctx context.Context, args []string, rio runIO) (*Result, error) {
	if len(args) == 0 || args[0] == "" {
		return nil, errors.New("sandbox: no program given")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The sandbox's init is a child of this thread (CLONE_PARENT of the
	// process started from it), and its parent-death signal fires when
	// that thread exits: keep the thread for the whole run.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	in, err := s.create(args, &rio)
	if err != nil {
		rio.out.wait()
		return s.setupFailure(in, err), err
	}
	// Nothing else knows this sandbox: its handle is its state.
	in.ownState = true
	defer in.destroy()
	if err := in.start(); err != nil {
		_ = in.destroy()
		rio.out.wait()
		return s.setupFailure(in, err), err
	}
	exit := in.supervise(ctx, rio.out)
	// init is reaped: the kernel has killed the rest of its pid namespace,
	// so the output pipes have no writer left.
	rio.out.wait()
	rep := in.collect(exit, rio.out)
	if err := in.destroy(); err != nil && rep.Error == "" {
		rep.Error = "teardown: " + err.Error()
	}
	res := &Result{ExitCode: rep.ExitCode, Signal: unix.Signal(rep.Signal), OutputTruncated: rep.OutputTruncated, Report: rep}
	if exit.reason == StatusCancelled {
		return res, ctx.Err()
	}
	return res, nil
}

// setupFailure is the result of a run that could not start.
func (s *Sandbox) setupFailure(in *instance, err error) *Result {
	rep := s.newReport()
	if in != nil {
		rep.ID = in.id
	}
	rep.Status = StatusSetupError
	rep.ExitCode = ExitSetupError
	rep.setError(err)
	return &Result{ExitCode: rep.ExitCode, Report: rep}
}

func (s *Sandbox) newReport() *Report {
	rep := &Report{Version: ContractVersion, Limits: map[LimitName]LimitReport{}}
	for n, l := range s.plan.reports {
		rep.Limits[n] = l
	}
	rep.Isolation = Isolation{
		Rootless:   s.rt.Rootless,
		Namespaces: "all",
		Network:    s.opts.Network.mode(),
		Seccomp:    s.opts.Seccomp.name(),
		Landlock:   s.landlock,
		Degraded:   slices.Clone(s.plan.degraded),
	}
	if len(rep.Limits) == 0 {
		rep.Limits = nil
	}
	return rep
}

// instance is one sandbox, from create to teardown.
type instance struct {
	sb  *Sandbox
	id  string
	ctr *Container
	// pidfd pins init: signals can never reach a recycled pid.
	pidfd int
	cg    *cgroupHandle
	// started is when the program was executed (Start returned);
	// initCPU and initCgroupCPU the CPU time used by then, by the
	// runtime's init (process, and cgroup): left out of the report.
	started       time.Time
	initCPU       cpuSample
	initCgroupCPU cpuSample
	// initTreeCPU is treeCPU of the program at its start (the CPU time
	// its process spent in the runtime's init), when it is polled, and
	// treeStart the program's start time then; treeCPU the last poll's,
	// less initTreeCPU.
	initTreeCPU, treeCPU cpuSample
	treeStart            uint64
	destroyed            bool
	// ownState: the container was made by this run, and its handle is
	// used as it is to start and delete it (startWith, deleteWith without
	// reading the state back).
	ownState bool
	// killReq, when closed, kills the sandbox (Child.Kill).
	killReq <-chan struct{}
	// execPid and killFn, for a process exec'd in a persistent sandbox
	// (persistent_linux.go): the process supervise waits for instead of
	// init, and how to kill it and what it started.
	execPid int
	killFn  func()
	// execCgroup is the persistent sandbox's cgroup an exec'd process
	// shares, and execOOMBase its OOM kill count when the process started.
	execCgroup  *cgroupHandle
	execOOMBase uint64
	// net is the network allowlist's relay, nil in the other modes.
	net *instanceNet
	// stats, for a pooled sandbox, are its cgroup's report files opened
	// ahead (prefetchStats); nil reads them the plain way.
	stats *statReader
	// held, for a pooled sandbox (pool_linux.go), are references kept
	// until destroy (CreateOpts.holdRefs): the sandbox's mount namespace
	// and the detached mounts whose last close would otherwise fall on
	// the program's execve or exit, each a teardown and an RCU grace
	// period on a run's critical path.
	held []*os.File
}

// pid is the process supervise waits for: init, or an exec'd process.
func (in *instance) pid() int {
	if in.execPid != 0 {
		return in.execPid
	}
	return in.ctr.Pid()
}

func newSandboxID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("sandbox id: %w", err)
	}
	return "sb-" + hex.EncodeToString(b[:]), nil
}

// create makes the container: namespaces, mounts, limits, credentials;
// init then waits for start. rio's writers get pipes whose read ends are
// copied from once the container exists.
func (s *Sandbox) create(args []string, rio *runIO) (in *instance, retErr error) {
	id := rio.detachedID
	if id == "" {
		var err error
		if id, err = newSandboxID(); err != nil {
			return nil, err
		}
	}
	in = &instance{sb: s, id: id, pidfd: -1}
	cfg := s.containerConfig(args)
	if rio.detachedID == "" {
		cfg.Annotations[sandboxOwnerAnnotation] = s.owner
	} else {
		// Nothing of this process's holds a detached sandbox.
		cfg.ParentDeathSignal = 0
	}

	opts := CreateOpts{Stdin: rio.stdin, Stdout: rio.stdoutFile, Stderr: rio.stderrFile, ControllingTTY: rio.controllingTTY, NewSession: true, netInProcess: s.net != nil, pause: rio.pause, earlyFilters: s.opts.Seccomp.Custom == nil, holdRefs: rio.holdRefs, waiter: rio.waiter}
	if rio.term != nil {
		rows, cols := rio.term.Size()
		cfg.Process.Terminal = true
		cfg.Process.ConsoleHeight, cfg.Process.ConsoleWidth = uint(rows), uint(cols)
		opts.ConsoleSocket = rio.console
	}
	var closeAfter []*os.File
	started := false
	defer func() {
		for _, f := range closeAfter {
			f.Close()
		}
		if retErr != nil && !started {
			rio.out.abort()
		}
	}()
	if opts.Stdin == nil {
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			return in, fmt.Errorf("sandbox: open %s: %w", os.DevNull, err)
		}
		closeAfter = append(closeAfter, devnull)
		opts.Stdin = devnull
	}
	for _, p := range []struct {
		w    *capWriter
		dest **os.File
	}{{rio.stdout, &opts.Stdout}, {rio.stderr, &opts.Stderr}} {
		if p.w == nil {
			if *p.dest == nil {
				// Never the caller's own stdio by accident.
				devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				if err != nil {
					return in, fmt.Errorf("sandbox: open %s: %w", os.DevNull, err)
				}
				closeAfter = append(closeAfter, devnull)
				*p.dest = devnull
			}
			continue
		}
		r, w, err := os.Pipe()
		if err != nil {
			return in, fmt.Errorf("sandbox: output pipe: %w", err)
		}
		closeAfter = append(closeAfter, w)
		*p.dest = w
		p.w.attach(r)
	}
	// The copies start before the container exists, so that what its
	// init writes when it fails (a Go runtime that cannot start, say) is
	// kept too. They see EOF once the container's processes are gone and
	// this process's write ends are closed (deferred above).
	rio.out.start()
	started = true
	ctr, err := s.rt.Create(id, cfg, opts)
	if err != nil {
		return in, fmt.Errorf("create sandbox: %w", err)
	}
	in.ctr = ctr
	if in.held = ctr.takeHeld(); in.held != nil {
		defer func() {
			if retErr != nil {
				closeFiles(in.held)
				in.held = nil
			}
		}()
	}
	if in.pidfd, err = ctr.pidfd(); err != nil {
		ctr.net.close()
		_ = ctr.Delete(true)
		in.ctr = nil
		return in, fmt.Errorf("create sandbox: %w", err)
	}
	in.cg = ctr.cgroup()
	if err := in.startNetwork(); err != nil {
		_ = ctr.Delete(true)
		in.ctr = nil
		unix.Close(in.pidfd)
		in.pidfd = -1
		return in, err
	}
	return in, nil
}

// start lets the program run; it returns once the program was executed.
func (in *instance) start() error {
	if err := in.ctr.startWith([]byte{startByte}, !in.ownState); err != nil {
		var w *WarningError
		if !errors.As(err, &w) {
			return fmt.Errorf("start sandbox: %w", err)
		}
	}
	in.started = time.Now()
	in.initCPU = procCPU(in.ctr.Pid())
	if in.cg != nil {
		in.initCgroupCPU = cgroupCPU(in.cg)
	}
	if in.pollsTree() {
		in.initTreeCPU, in.treeStart = treeCPU(in.pid(), 0)
	}
	return nil
}

// pollsTree: the CPU time limit is held by polling the program's process
// tree (treeCPU), for want of the sandbox's cgroup (none for this caller,
// or an Exec's program, which shares the sandbox's).
func (in *instance) pollsTree() bool {
	return in.sb.opts.Limits.CPUTime > 0 && !(in.sb.plan.cgroupCPUPoll && in.cg != nil)
}

// exitInfo is how the program ended.
type exitInfo struct {
	ws  unix.WaitStatus
	ru  unix.Rusage
	end time.Time
	err error
	// reason is why the runtime killed the sandbox ("" if it did not);
	// detail says more.
	reason RunStatus
	detail string
}

// supervise waits for the program, killing the sandbox at the wall time
// limit, at the CPU time limit (polled from the cgroup), past the output
// limit, or when ctx ends; the first reason is the one reported.
func (in *instance) supervise(ctx context.Context, out *outputCap) exitInfo {
	pid := in.pid()
	done := make(chan exitInfo, 1)
	go func() {
		var e exitInfo
		for {
			_, err := unix.Wait4(pid, &e.ws, 0, &e.ru)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			e.end = time.Now()
			e.err = err
			done <- e
			return
		}
	}()
	lim := in.sb.opts.Limits
	var wall <-chan time.Time
	if lim.WallTime > 0 {
		t := time.NewTimer(lim.WallTime - time.Since(in.started))
		defer t.Stop()
		wall = t.C
	}
	var cpuTick <-chan time.Time
	pollTree := in.pollsTree()
	if lim.CPUTime > 0 {
		t := time.NewTicker(cpuPollInterval(lim.CPUTime))
		defer t.Stop()
		cpuTick = t.C
	}
	var exceeded <-chan struct{}
	if out != nil && out.kill {
		exceeded = out.exceeded
	}
	ctxDone := ctx.Done()
	var reason RunStatus
	var detail string
	killFor := func(r RunStatus, d string) {
		if reason == "" {
			reason, detail = r, d
		}
		in.kill()
	}
	for {
		select {
		case e := <-done:
			e.reason, e.detail = reason, detail
			return e
		case <-wall:
			wall = nil
			killFor(StatusWallTimeout, fmt.Sprintf("killed at the wall time limit of %s", lim.WallTime))
		case <-cpuTick:
			var used cpuSample
			if pollTree {
				tree, _ := treeCPU(pid, in.treeStart)
				if used = tree.minus(in.initTreeCPU); used.ok {
					in.treeCPU = used
				}
			} else {
				used = cgroupCPU(in.cg).minus(in.initCgroupCPU)
			}
			if used.ok && used.total() >= lim.CPUTime {
				cpuTick = nil
				killFor(StatusCPUTimeout, fmt.Sprintf("killed at the CPU time limit of %s", lim.CPUTime))
			}
		case <-exceeded:
			exceeded = nil
			killFor(StatusOutputLimit, fmt.Sprintf("killed past the output limit of %d bytes", lim.Output))
		case <-ctxDone:
			ctxDone = nil
			killFor(StatusCancelled, "killed: "+ctx.Err().Error())
		case <-in.killReq:
			in.killReq = nil
			killFor(StatusCancelled, "killed by the caller (Kill)")
		}
	}
}

// kill SIGKILLs the whole sandbox: init is pid 1 of the sandbox's pid
// namespace, and the kernel kills every process of a pid namespace whose
// init dies; the cgroup, when there is one, is killed too (cgroup.kill).
func (in *instance) kill() {
	if in.killFn != nil {
		in.killFn()
		return
	}
	if in.pidfd >= 0 {
		_ = unix.PidfdSendSignal(in.pidfd, unix.SIGKILL, nil, 0)
	}
	if in.cg != nil {
		_ = in.cg.signal(unix.SIGKILL)
	}
}

// collect makes the report of a finished run, before teardown removes the
// cgroup that measured it.
func (in *instance) collect(e exitInfo, out *outputCap) *Report {
	s := in.sb
	rep := s.newReport()
	rep.ID = in.id
	if e.err != nil {
		rep.Status = StatusSetupError
		rep.Error = fmt.Sprintf("wait for the sandbox: %v", e.err)
		rep.ExitCode = ExitSetupError
		return rep
	}
	rep.Network = in.networkReport()
	rep.WallTime = e.end.Sub(in.started)
	ru := cpuSample{user: time.Duration(e.ru.Utime.Nano()), system: time.Duration(e.ru.Stime.Nano()), ok: true}
	prog := ru.minus(in.initCPU).rescale(max(ru.total()-in.initCPU.total(), 0))
	rep.CPUUser, rep.CPUSystem, rep.CPUSource = prog.user, prog.system, "rusage"
	if t := in.treeCPU; t.ok && t.total() > prog.total() {
		// Processes the program did not wait for (it was killed first,
		// say) had used more, as the last poll of its tree saw.
		rep.CPUUser, rep.CPUSystem, rep.CPUSource = t.user, t.system, "proc"
	}
	rep.PeakMemory = e.ru.Maxrss * 1024
	rep.PeakMemorySource = peakRusage
	rep.VoluntaryContextSwitches = e.ru.Nvcsw
	rep.InvoluntaryContextSwitches = e.ru.Nivcsw
	var oomKills uint64
	hit := func(n LimitName, b bool) {
		if l, ok := rep.Limits[n]; ok && b && l.Status == LimitEnforced {
			l.Hit = true
			rep.Limits[n] = l
		}
	}
	if in.cg != nil {
		m := measureCgroupWith(in.cg, in.stats)
		rep.Isolation.Cgroup = m.version
		if cpu := m.cpu.minus(in.initCgroupCPU); cpu.ok {
			rep.CPUUser, rep.CPUSystem, rep.CPUSource = cpu.user, cpu.system, "cgroup"
		}
		if m.peakSource != "" {
			rep.PeakMemory, rep.PeakMemorySource = m.peak, m.peakSource
		}
		oomKills = m.oomKills
		rep.OOMKilled = oomKills > 0
		hit(LimitMemory, m.memoryHit || oomKills > 0)
		hit(LimitPids, m.pidsHit)
	}
	if in.execCgroup != nil && e.reason == "" && e.ws.Signaled() && e.ws.Signal() == unix.SIGKILL {
		// An exec'd program shares the sandbox's cgroup, whose counters
		// are the sandbox's: a SIGKILL nobody here sent, while the
		// cgroup's OOM killer fired, is the OOM killer's.
		if n, err := in.execCgroup.oomKills(); err == nil && n > in.execOOMBase {
			oomKills = n - in.execOOMBase
			rep.OOMKilled = true
			hit(LimitMemory, true)
		}
	}
	if out != nil {
		rep.OutputBytes, rep.OutputTruncated = out.totals()
	}

	ws := e.ws
	switch {
	case ws.Signaled():
		rep.Signal = int(ws.Signal())
		rep.SignalName = signalName(rep.Signal)
		rep.ExitCode = 128 + rep.Signal
	default:
		rep.ExitCode = ws.ExitStatus()
	}
	hitLimit := func(n LimitName) {
		if l, ok := rep.Limits[n]; ok {
			l.Hit = true
			rep.Limits[n] = l
		}
	}
	cpuLimit := s.opts.Limits.CPUTime
	switch {
	case e.reason != "":
		rep.Status, rep.Killed, rep.Error = e.reason, true, e.detail
		switch e.reason {
		case StatusWallTimeout:
			hitLimit(LimitWallTime)
		case StatusCPUTimeout:
			hitLimit(LimitCPUTime)
		case StatusOutputLimit:
			hitLimit(LimitOutput)
		}
	case oomKills > 0 && !(ws.Exited() && ws.ExitStatus() == 0):
		rep.Status = StatusOOM
	case ws.Signaled() && cpuLimit > 0 && (ws.Signal() == unix.SIGXCPU || (ws.Signal() == unix.SIGKILL && rep.CPUTime() >= cpuLimit)):
		rep.Status = StatusCPUTimeout
		hitLimit(LimitCPUTime)
	case cpuLimit > 0 && rep.CPUTime() > cpuLimit:
		// Over the limit between two polls, or in processes that each
		// stayed under RLIMIT_CPU: a time limit exceeded all the same
		// (isolate's TO).
		rep.Status = StatusCPUTimeout
		rep.Error = fmt.Sprintf("used %s of CPU time, over the limit of %s", rep.CPUTime().Round(time.Millisecond), cpuLimit)
		hitLimit(LimitCPUTime)
	case ws.Signaled():
		rep.Status = StatusSignaled
		if ws.Signal() == unix.SIGXFSZ {
			hitLimit(LimitFileSize)
		}
	case ws.ExitStatus() == 0:
		rep.Status = StatusOK
	default:
		rep.Status = StatusExited
	}
	return rep
}

// cgroupMeasures are what a sandbox's cgroup measured.
type cgroupMeasures struct {
	version            string
	cpu                cpuSample
	peak               int64
	peakSource         string
	oomKills           uint64
	memoryHit, pidsHit bool
}

func measureCgroup(h *cgroupHandle) cgroupMeasures { return measureCgroupWith(h, nil) }

// measureCgroupWith is measureCgroup with the files read through r
// (statReader).
func measureCgroupWith(h *cgroupHandle, r *statReader) cgroupMeasures {
	m := cgroupMeasures{cpu: cgroupCPUWith(h, r)}
	v2 := cgroups.IsCgroup2UnifiedMode()
	if n, err := h.oomKillsWith(r); err == nil {
		m.oomKills = n
	}
	if v2 {
		m.version = "v2"
		dir := h.m.Path("")
		if p, err := r.readUint(filepath.Join(dir, "memory.peak")); err == nil {
			m.peak, m.peakSource = int64(p), peakCgroupV2
		}
		if n, err := r.statField(filepath.Join(dir, "memory.events"), "max"); err == nil && n > 0 {
			m.memoryHit = true
		}
		if n, err := r.statField(filepath.Join(dir, "pids.events"), "max"); err == nil && n > 0 {
			m.pidsHit = true
		}
		return m
	}
	m.version = "v1"
	if dir := h.m.Path("memory"); dir != "" {
		if p, err := r.readUint(filepath.Join(dir, "memory.max_usage_in_bytes")); err == nil {
			m.peak, m.peakSource = int64(p), peakCgroupV1
		}
		if n, err := r.readUint(filepath.Join(dir, "memory.failcnt")); err == nil && n > 0 {
			m.memoryHit = true
		}
	}
	if dir := h.m.Path("pids"); dir != "" {
		if n, err := r.statField(filepath.Join(dir, "pids.events"), "max"); err == nil && n > 0 {
			m.pidsHit = true
		}
	}
	return m
}

// destroy tears the sandbox down: every process killed, the cgroup and the
// state directory removed. It may be called more than once.
func (in *instance) destroy() error {
	if in == nil || in.destroyed {
		return nil
	}
	in.destroyed = true
	var err error
	in.stats.close()
	in.reapInit()
	if in.ctr != nil {
		if derr := in.ctr.deleteWith(true, !in.ownState); derr != nil {
			var w *WarningError
			if !errors.As(derr, &w) {
				err = derr
			} else {
				err = w.Err
			}
		}
	}
	in.stopNetwork()
	if in.pidfd >= 0 {
		unix.Close(in.pidfd)
		in.pidfd = -1
	}
	// The last references, once init is reaped: the sandbox's mounts
	// are taken down here, in this thread.
	closeFiles(in.held)
	in.held = nil
	return err
}

// reapInit kills init (whole sandbox) and reaps it, unless supervise did:
// an init that failed after start, or one never started, would otherwise
// stay a zombie, and keep a cgroup v1 from being removed. Through the
// pidfd, which only ever names this process: waitid gives ECHILD once it
// is reaped.
func (in *instance) reapInit() {
	if in.pidfd < 0 {
		return
	}
	in.kill()
	fds := []unix.PollFd{{Fd: int32(in.pidfd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		n, err := unix.Poll(fds, 100)
		if n > 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
			break
		}
	}
	var info unix.Siginfo
	_ = unix.Waitid(unix.P_PIDFD, in.pidfd, &info, unix.WEXITED|unix.WNOHANG, nil)
}
