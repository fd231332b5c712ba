package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

// isRootless resolves --rootless: auto means "not root".
func isRootless(c *cli.Context) bool {
	if b, err := parseRootless(c.String("rootless")); err == nil && b != nil {
		return *b
	}
	return os.Geteuid() != 0
}

// parseRootless reads --rootless as runc does: "auto" (any case) or ""
// is nil, anything strconv.ParseBool takes (1, t, TRUE, false, ...) is
// that value.
func parseRootless(s string) (*bool, error) {
	if s == "" || strings.EqualFold(s, "auto") {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return nil, fmt.Errorf("unknown --rootless %q: use auto, true or false", s)
	}
	return &b, nil
}

// Default state roots, as runc's: root's, and an unprivileged user's below
// $XDG_RUNTIME_DIR.
const (
	rootStateRoot = "/run/nanobox-runc"
	xdgStateName  = "nanobox-runc"
)

// stateRoot is --root, or the default for this user: /run/nanobox-runc for
// root, $XDG_RUNTIME_DIR/nanobox-runc for anyone else. A default root is
// checked (see checkDefaultRoot); --root is taken as given.
func stateRoot(c *cli.Context) (string, error) {
	if r := c.String("root"); r != "" {
		return filepath.Abs(r)
	}
	uid := os.Geteuid()
	if uid == 0 && !honorXDGRuntimeDir() {
		err := checkDefaultRoot(rootStateRoot, false)
		if err != nil && libbox.InUserNS() {
			// "Remove it" cannot help: it is the host root's.
			err = fmt.Errorf("%w (this is uid 0 of a user namespace: set XDG_RUNTIME_DIR, and USER to the user's name, as rootless podman does)", err)
		}
		return rootStateRoot, err
	}
	x := os.Getenv("XDG_RUNTIME_DIR")
	if x == "" {
		// No fallback to a shared directory such as /tmp: a predictable
		// path there can be made (or be a symlink) by another user first.
		return "", fmt.Errorf("no state root: XDG_RUNTIME_DIR is not set, and uid %d cannot use %s: set XDG_RUNTIME_DIR to a directory of yours (a login session's /run/user/%d) or pass --root DIR",
			uid, rootStateRoot, uid)
	}
	if !filepath.IsAbs(x) {
		return "", fmt.Errorf("no state root: XDG_RUNTIME_DIR %q is not an absolute path: fix it or pass --root DIR", x)
	}
	root := filepath.Join(x, xdgStateName)
	return root, checkDefaultRoot(root, true)
}

// honorXDGRuntimeDir: root's state root is not this process's, though its
// euid is 0, when it runs in a user namespace as a user's stand-in (rootless
// podman runs the runtime so): $XDG_RUNTIME_DIR/nanobox-runc then, as runc
// does (shouldHonorXDGRuntimeDir), unless $USER says root.
func honorXDGRuntimeDir() bool {
	if os.Getenv("XDG_RUNTIME_DIR") == "" || !libbox.InUserNS() {
		return false
	}
	u, ok := os.LookupEnv("USER")
	return !ok || u != "root"
}

// checkDefaultRoot makes sure a default state root is a real directory of
// the caller's, not a symlink or someone else's directory that would hold
// (or redirect) its containers' state. In $XDG_RUNTIME_DIR it is created
// as runc does: 0700 with the sticky bit, which keeps a session cleaner
// from pruning it (XDG Base Directory spec). Root's is made by create.
func checkDefaultRoot(root string, xdg bool) error {
	if xdg {
		if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create state root %s: %w", root, err)
		}
	}
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state root: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("state root %s is not a directory (%s): remove it, or pass --root DIR", root, fi.Mode().Type())
	}
	uid := os.Geteuid()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return fmt.Errorf("state root %s belongs to uid %d, not to you (uid %d): remove it, or pass --root DIR", root, st.Uid, uid)
	}
	if xdg && (fi.Mode().Perm() != 0o700 || fi.Mode()&fs.ModeSticky == 0) {
		if err := os.Chmod(root, 0o700|fs.ModeSticky); err != nil {
			return fmt.Errorf("state root %s: %w", root, err)
		}
	}
	return nil
}

func newRuntime(c *cli.Context) (*libbox.Runtime, error) {
	root, err := stateRoot(c)
	if err != nil {
		return nil, err
	}
	return &libbox.Runtime{Root: root, Rootless: isRootless(c)}, nil
}

// loadContainer opens the container named by the first argument.
func loadContainer(c *cli.Context) (*libbox.Container, error) {
	id := c.Args().First()
	rt, err := newRuntime(c)
	if err != nil {
		return nil, err
	}
	return rt.Load(id)
}

// loadConfig reads the bundle's config.json and converts it.
func loadConfig(c *cli.Context, rootless bool) (*libbox.Config, error) {
	bundle := c.String("bundle")
	if bundle == "" {
		bundle = "."
	}
	bundle, err := filepath.Abs(bundle)
	if err != nil {
		return nil, fmt.Errorf("bundle path: %w", err)
	}
	spec, err := specconv.LoadSpec(bundle, logrus.Warnf)
	if err != nil {
		return nil, err
	}
	return specconv.FromSpec(spec, specconv.Options{
		Bundle:       bundle,
		Rootless:     rootless,
		NoPivotRoot:  c.Bool("no-pivot"),
		NoNewKeyring: c.Bool("no-new-keyring"),
		Warnf:        logrus.Warnf,
	})
}

// createFlags are shared by create and run.
func createFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "path to the bundle directory (default: the current directory)"},
		&cli.StringFlag{Name: "pid-file", Usage: "write the init process's pid to this file"},
		&cli.StringFlag{Name: "console-socket", Usage: "AF_UNIX socket path to send the pty master to, when process.terminal is true"},
		&cli.StringFlag{Name: "pidfd-socket", Usage: "AF_UNIX socket path to send a pidfd of the container's init to"},
		&cli.IntFlag{Name: "preserve-fds", Usage: "pass this many file descriptors beyond stdio (3, 4, ...) to the container"},
		&cli.BoolFlag{Name: "no-pivot", Usage: "do not use pivot_root (for a rootfs on ramfs)"},
		&cli.BoolFlag{Name: "no-new-keyring", Usage: "keep the caller's session keyring instead of a new one"},
	}
}

// createContainer is the shared body of create and run. consoleSocket, from
// a foreground run, is used only when the process has a terminal.
// ephemeral: the container never outlives this process (a foreground run
// without --keep), so its state needs no fsync (libbox.Runtime.Ephemeral).
// foreground: a run that stays; without a terminal, init's stdio is then
// pipes this process relays (returned, to start after create), as runc's.
func createContainer(c *cli.Context, consoleSocket *os.File, ephemeral, foreground bool) (_ *libbox.Container, _ *stdioPipes, retErr error) {
	if err := checkArgs(c, 1, 1); err != nil {
		return nil, nil, err
	}
	id := c.Args().First()
	if err := libbox.ValidateID(id); err != nil {
		return nil, nil, err
	}
	if err := checkSystemdCgroup(c); err != nil {
		return nil, nil, err
	}
	rt, err := newRuntime(c)
	if err != nil {
		return nil, nil, err
	}
	rt.Ephemeral = ephemeral
	cfg, err := loadConfig(c, rt.Rootless)
	if err != nil {
		return nil, nil, err
	}
	extra, err := listenFiles()
	if err != nil {
		return nil, nil, err
	}
	var initEnv []string
	if len(extra) > 0 {
		// init's alone, as in runc: an exec'd process has no such fds.
		initEnv = []string{"LISTEN_FDS=" + strconv.Itoa(len(extra)), "LISTEN_PID=1"}
	}
	preserved, err := preservedFiles(3+len(extra), c.Int("preserve-fds"))
	if err != nil {
		return nil, nil, err
	}
	extra = append(extra, preserved...)
	if !cfg.Process.Terminal {
		consoleSocket = nil
	}
	// init leads a session of its own, as runc's nsexec makes it: out of
	// the caller's process group (whose signals would reach it) and away
	// from the caller's controlling terminal (which it could write to and
	// push input into with TIOCSTI).
	opts := libbox.CreateOpts{ExtraFiles: extra, Env: initEnv, ConsoleSocket: consoleSocket, Log: logrus.StandardLogger(), NewSession: true}
	// A network allowlist's supervisor logs its denials to --log. Never
	// to stderr: podman's conmon and containerd's shim read create's
	// output pipes to their end, which a supervisor holding them would
	// never give.
	if f, ok := logFile.(*os.File); ok {
		opts.NetworkLog, opts.NetworkLogJSON = f, c.String("log-format") == "json"
	}
	if path := c.String("console-socket"); path != "" && consoleSocket == nil {
		if !cfg.Process.Terminal {
			return nil, nil, errors.New("--console-socket given but process.terminal is false in config.json")
		}
		s, err := dialConsoleSocket(path)
		if err != nil {
			return nil, nil, err
		}
		defer s.Close()
		opts.ConsoleSocket = s
	}
	if cfg.Process.Terminal && opts.ConsoleSocket == nil {
		return nil, nil, errors.New("process.terminal is true in config.json: pass --console-socket, or set terminal to false")
	}
	// Connected before anything is made, so that a wrong path fails
	// create with nothing to undo.
	pidfdSock, err := dialPidfdSocket(c.String("pidfd-socket"))
	if err != nil {
		return nil, nil, err
	}
	if pidfdSock != nil {
		defer pidfdSock.Close()
	}
	var pipes *stdioPipes
	if foreground && !cfg.Process.Terminal {
		if pipes, err = newStdioPipes(cfg); err != nil {
			return nil, nil, err
		}
		defer func() {
			if retErr != nil {
				pipes.closeAll()
			}
		}()
		opts.Stdin, opts.Stdout, opts.Stderr = pipes.child[0], pipes.child[1], pipes.child[2]
	}
	ctr, err := rt.Create(id, cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	if pidfdSock != nil {
		if err := sendInitPidfd(ctr, pidfdSock); err != nil {
			_ = ctr.Delete(true)
			return nil, nil, err
		}
	}
	logrus.Debugf("container %s created in %s: init pid %d", id, rt.Root, ctr.Pid())
	if pf := c.String("pid-file"); pf != "" {
		if err := writePidFile(pf, ctr.Pid()); err != nil {
			_ = ctr.Delete(true)
			return nil, nil, err
		}
	}
	return ctr, pipes, nil
}

// preservedFiles are the descriptors --preserve-fds N passes on: this
// process's fds first..first+N-1 (first is 3, or after socket activation's
// fds, see listenFiles), which the CLI owns (the library takes files, as
// os/exec does, and never wraps descriptors it was not given). Each must be
// one the runtime was started with: those are never close-on-exec (they
// survived the execve that started it), while everything the runtime opens
// itself (the Go runtime's cgroup file, the --log file, the state
// directory's lock) is. A number that is free, or holds one of the
// runtime's own, is refused, so none of them ever reaches the container.
func preservedFiles(first, n int) ([]*os.File, error) {
	if n < 0 {
		return nil, fmt.Errorf("--preserve-fds %d: must not be negative", n)
	}
	files := make([]*os.File, 0, n)
	for fd := first; fd < first+n; fd++ {
		if err := inheritedFd(fd); err != nil {
			return nil, fmt.Errorf("--preserve-fds %d: fd %d was not passed to the runtime (%w): start it with fds %d to %d open, or pass a smaller --preserve-fds", n, fd, err, first, first+n-1)
		}
		files = append(files, os.NewFile(uintptr(fd), "preserved-fd-"+strconv.Itoa(fd)))
	}
	return files, nil
}

// inheritedFd checks that fd is one this process was started with (see
// preservedFiles).
func inheritedFd(fd int) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err == nil && flags&unix.FD_CLOEXEC != 0 {
		err = errors.New("it is one of the runtime's own")
	}
	return err
}

// listenFiles are the sockets of systemd's socket activation
// (sd_listen_fds(3)) that create and run pass on to the container, as
// runc does: when LISTEN_PID is this process and LISTEN_FDS is N, fds
// 3..3+N-1, which the container's process gets as its fds 3..3+N-1 with
// LISTEN_FDS=N and LISTEN_PID=1 (its own pid in its pid namespace).
// --preserve-fds counts from the fd after them. A LISTEN_PID of another
// process (a variable inherited from further up) passes nothing.
func listenFiles() ([]*os.File, error) {
	if os.Getenv("LISTEN_FDS") == "" || os.Getenv("LISTEN_PID") != strconv.Itoa(os.Getpid()) {
		return nil, nil
	}
	n, err := strconv.Atoi(os.Getenv("LISTEN_FDS"))
	if err != nil || n < 0 {
		return nil, fmt.Errorf("LISTEN_FDS=%q is not a number of descriptors: unset it, or set it as sd_listen_fds(3) says", os.Getenv("LISTEN_FDS"))
	}
	files := make([]*os.File, 0, n)
	for fd := 3; fd < 3+n; fd++ {
		if err := inheritedFd(fd); err != nil {
			return nil, fmt.Errorf("LISTEN_FDS=%d: fd %d was not passed to the runtime (%w): start it with the activated sockets at fds 3 to %d", n, fd, err, 2+n)
		}
		files = append(files, os.NewFile(uintptr(fd), "listen-fd-"+strconv.Itoa(fd)))
	}
	return files, nil
}

// dialConsoleSocket connects to the caller's console socket.
func dialConsoleSocket(path string) (*os.File, error) {
	return dialUnix("console socket", path)
}

// dialPidfdSocket connects to --pidfd-socket's path; nil without one.
func dialPidfdSocket(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	return dialUnix("pidfd socket", path)
}

// dialUnix connects a stream socket to the AF_UNIX path a flag named
// (what, for errors).
func dialUnix(what, path string) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("connect to %s %s: %w", what, path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// sendInitPidfd sends a pidfd of the container's init over sock.
func sendInitPidfd(ctr *libbox.Container, sock *os.File) error {
	pidfd, err := ctr.Pidfd()
	if err != nil {
		return fmt.Errorf("pidfd socket: %w", err)
	}
	defer pidfd.Close()
	return sendPidfd(sock, "standard", int(pidfd.Fd()))
}

// sendPidfd sends a pidfd with SCM_RIGHTS, its message the kind of process
// ("standard" for init, "setns" for an exec'd one), as runc's
// --pidfd-socket does.
func sendPidfd(sock *os.File, kind string, pidfd int) error {
	for {
		err := unix.Sendmsg(int(sock.Fd()), []byte(kind), unix.UnixRights(pidfd), nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("send pidfd to %s: %w", sock.Name(), err)
		}
		return nil
	}
}

// writePidFile writes pid in decimal with no newline (conmon and the
// containerd shim parse it strictly), atomically: a temp file of a unique
// name in the same directory, renamed over path. (A fixed temp name, left
// behind by a run that was killed, would make every later write fail.)
func writePidFile(path string, pid int) error {
	path, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	// O_EXCL, and so no following a planted symlink.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.WriteString(strconv.Itoa(pid))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write pid file: %w", err)
	}
	return nil
}

// parseSignal accepts "TERM", "SIGTERM", "sigterm", "15" and "" (SIGTERM,
// as runc's kill takes it); 0, as in
// kill(2) and runc, only checks that the container's init is there.
func parseSignal(s string) (unix.Signal, error) {
	if s == "" {
		// runc's kill takes an empty signal argument as the default.
		return unix.SIGTERM, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > 64 {
			return 0, fmt.Errorf("invalid signal number %d", n)
		}
		return unix.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q", s)
}

// warnOrFail logs a libbox.WarningError and returns any other error.
func warnOrFail(err error) error {
	var w *libbox.WarningError
	if errors.As(err, &w) {
		logrus.Warn(w.Err)
		fmt.Fprintln(os.Stderr, "nanobox-runc: warning:", w.Err)
		return nil
	}
	return err
}
