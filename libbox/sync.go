package libbox

// The parent (create/run/exec) and the container's init talk over one
// AF_UNIX SOCK_SEQPACKET socketpair. Every message is one packet. The first
// exchange happens in C before the Go runtime of init starts (libbox/nsenter,
// plain text lines); the rest is syncMsg packets in the binary codec
// (codec.go; a pooled sandbox's waiter sends init's ready message as init
// encoded it), described here.
//
//	who     type          payload                 meaning / reply
//	------  ------------  ----------------------  ----------------------------------------
//	parent  (bootstrap)   nsenter text            namespaces to join / create (nsenter)
//	C       usermap       -                       write uid_map/gid_map of the C process;
//	parent  usermap-ok    -                       ... done
//	C       pid=N         -                       init's pid; the C stage has exited
//	C       error=TEXT    -                       the C stage failed
//	parent  config        initConfig              what init must set up (a kind
//	                                              of its own in the codec)
//	parent  (mount trees) 1-byte packet with      the bind sources the runtime
//	                      fds (SCM_RIGHTS)        opened, when MountSources
//	                                              lists any (mountsrc_linux.go)
//	parent  exec          execConfig, binary      (exec, instead of config) the process
//	                      as config is            to start in the joined namespaces;
//	                                              success is EOF: the socket is
//	                                              close-on-exec
//	init    hooks         -                       run prestart + createRuntime hooks now
//	parent  hooks-done    -                       ... done (or error)
//	init    seccomp-fd    -, then a 1-byte        the seccomp notify fd, for the parent to
//	                      packet with the fd      hand to listenerPath (no reply;
//	                      (SCM_RIGHTS)            seccomp_linux.go)
//	init    net-fds       netFdsMsg, then a       a network allowlist's listening sockets and
//	                      packet with the fds     namespace files (no reply; network_linux.go)
//	parent  net-listen    netFdsMsg               (the listener helper, instead of config)
//	                                              listen on these ports; the helper answers
//	                                              net-fds and exits
//	init    ready         -                       set-up complete; init now waits on the
//	                                              exec fifo for `start`
//	init    error         Error text, ErrorKind   set-up failed; init exits
//	parent  error         Error text              the parent failed (hooks); init exits
//	parent  mount-op      mountOp                 (a mount helper, instead of config:
//	                                              livemount_linux.go) an operation on
//	                                              the container's mounts; "attach" is
//	                                              followed by a 1-byte packet with the
//	                                              mount tree (SCM_RIGHTS)
//	helper  mount-done    mountReply              done; "open-tree" is followed by a
//	                                              1-byte packet with the tree; the
//	                                              helper exits (or: error)
//	init    mount-source  Source (an index)       the tree of a mount in LateSources, now
//	parent  mount-source  -, then a 1-byte        (or: error; init exits)
//	                      packet with the tree
//	                      (SCM_RIGHTS)
//	init    log           Log {level, msg}        something init (or an exec'd process)
//	                                              logged during set-up, at or above the
//	                                              config's LogLevel; the parent hands
//	                                              it to its Logger (no reply)
//
// The descriptors that cross this socket are the seccomp notify fd and a
// network allowlist's; init sends the pty master straight to the console
// socket it was given.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

type syncType string

const (
	syncConfig    syncType = "config"
	syncExec      syncType = "exec"
	syncHooks     syncType = "hooks"
	syncHooksDone syncType = "hooks-done"
	syncSeccompFd syncType = "seccomp-fd"
	syncNetFds    syncType = "net-fds"
	syncNetListen syncType = "net-listen"
	syncReady     syncType = "ready"
	syncError     syncType = "error"
	syncMountOp   syncType = "mount-op"
	syncMountDone syncType = "mount-done"
	syncLog       syncType = "log"
	// syncMountSource: init asks for the tree of mount Source (one of
	// initConfig.LateSources); the parent answers mount-source and the
	// tree, in a 1-byte packet (SCM_RIGHTS), or error.
	syncMountSource syncType = "mount-source"
	// syncHeldFds precedes the descriptors init hands the parent to hold
	// (initConfig.SendHeld); Held is their number.
	syncHeldFds syncType = "held-fds"
)

// maxSyncMsg is the socket buffer asked for; the kernel caps it at
// net.core.wmem_max, which bounds the largest packet (the config).
const maxSyncMsg = 4 << 20

type syncMsg struct {
	Type  syncType `json:"type"`
	Error string   `json:"error,omitempty"`
	// ErrorKind classifies an init error the caller may act on
	// (errorKinds): the program was not found, or is not executable.
	ErrorKind string      `json:"errorKind,omitempty"`
	Config    *initConfig `json:"config,omitempty"`
	Exec      *execConfig `json:"exec,omitempty"`
	Net       *netFdsMsg  `json:"net,omitempty"`
	MountOp   *mountOp    `json:"mountOp,omitempty"`
	MountDone *mountReply `json:"mountDone,omitempty"`
	Log       *logEntry   `json:"log,omitempty"`
	Held      int         `json:"held,omitempty"`
	Source    *int        `json:"source,omitempty"`
}

// logEntry is one message init logged; Level is a logrus level name.
type logEntry struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
}

// initConfig is what the parent sends init after the namespaces exist.
type initConfig struct {
	Config *Config `json:"config"`
	// ID is the container id, for the state JSON hooks receive.
	ID string `json:"id"`
	// Fd numbers in init of the descriptors the parent passed.
	FifoFd          int `json:"fifoFd"`
	ConsoleSocketFd int `json:"consoleSocketFd"` // -1: none
	ExeFd           int `json:"exeFd"`
	PreserveFds     int `json:"preserveFds"`
	// Rootless is the runtime's mode (Runtime.Rootless).
	Rootless bool `json:"rootless,omitempty"`
	// MountSources are the indexes in Config.Mounts of the source trees
	// sent right after this message (mountsrc_linux.go).
	MountSources []int `json:"mountSources,omitempty"`
	// LateSources are the indexes of the mounts whose trees init asks
	// for when it makes them (mount-source; mountsrc_linux.go).
	LateSources []int `json:"lateSources,omitempty"`
	// NewUTSNS: whether init made its UTS namespace itself (false when it
	// joined an existing one or shares the host's).
	NewUTSNS bool `json:"newUTSNS"`
	// NewNetNS: init made a network namespace, whose lo it brings up.
	NewNetNS bool `json:"newNetNS"`
	// LogLevel is the lowest level (a logrus level name) of the messages
	// init forwards to the parent.
	LogLevel string `json:"logLevel,omitempty"`
	// NewCgroupNS asks init to unshare its cgroup namespace first thing
	// (it is in the container's cgroup by then).
	NewCgroupNS bool `json:"newCgroupNS"`
	// ControllingTTY: stdin is a terminal the caller opened, which init
	// makes its controlling terminal (CreateOpts.ControllingTTY).
	ControllingTTY bool `json:"controllingTTY,omitempty"`
	// NewSession: init leads a session of its own (CreateOpts.NewSession).
	NewSession bool `json:"newSession,omitempty"`
	// Pause: a container with no program starts the pause (a persistent
	// sandbox's pid 1, deferred_linux.go).
	Pause bool `json:"pause,omitempty"`
	// EarlyFilters: init applies its filters before it waits for start
	// (CreateOpts.earlyFilters).
	EarlyFilters bool `json:"earlyFilters,omitempty"`
	// SendHeld: init sends the parent, before ready, the descriptors
	// whose last close would otherwise fall on the program's execve or
	// exit (CreateOpts.holdRefs).
	SendHeld bool `json:"sendHeld,omitempty"`
	// Waiter: a deferred init may wait for its program in the waiter
	// (waiter_linux.go): the runtime's binary has no file capabilities.
	Waiter bool `json:"waiter,omitempty"`
	// State is the OCI state (status creating) for the createContainer
	// and startContainer hooks.
	State *OCIState `json:"state"`
	// SeccompFilter is Config.Seccomp compiled by the runtime (struct
	// sock_filter instructions, seccomp_cache_linux.go); empty: init
	// compiles it.
	SeccompFilter []byte `json:"seccompFilter,omitempty"`
}

// syncSocket is one end of the socketpair. Close makes it unusable.
type syncSocket struct{ f *os.File }

// errSyncClosed: the socket was closed on this side.
var errSyncClosed = errors.New("sync socket closed")

// send sends m in the binary codec (codec.go), as every message between
// the runtime and the processes it starts from its own binary: both ends
// are often new processes, and JSON there meant building the encoders or
// decoders of every type syncMsg reaches, Config's included, first (200 KB
// of allocations and ~0.3 ms in init for its ready message alone).
func (s *syncSocket) send(m syncMsg) error {
	return s.sendRaw(encodeSyncMsg(&m))
}

// sendConfig and sendExec send init its config, or an exec'd process its
// own.
func (s *syncSocket) sendConfig(ic *initConfig) error {
	return s.sendRaw(encodeInitConfig(ic))
}

func (s *syncSocket) sendExec(ec *execConfig) error {
	return s.sendRaw(encodeExecConfig(ec))
}

func (s *syncSocket) sendRaw(b []byte) error {
	if s.f == nil {
		return errSyncClosed
	}
	if _, err := unix.Write(int(s.f.Fd()), b); err != nil {
		return fmt.Errorf("sync socket write: %w", err)
	}
	return nil
}

// errSyncEOF means the peer closed its end: init (or the parent) is gone.
var errSyncEOF = errors.New("peer closed the sync socket")

func (s *syncSocket) recvRaw() ([]byte, error) {
	if s.f == nil {
		return nil, errSyncClosed
	}
	fd := int(s.f.Fd())
	for {
		// MSG_PEEK|MSG_TRUNC returns the packet's real length, so the
		// buffer is sized exactly instead of allocating the maximum.
		size, _, err := unix.Recvfrom(fd, nil, unix.MSG_PEEK|unix.MSG_TRUNC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sync socket read: %w", err)
		}
		if size == 0 {
			// Either EOF or an empty packet; read it to tell them apart.
			size = 1
		}
		buf := make([]byte, size)
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sync socket read: %w", err)
		}
		if n == 0 {
			return nil, errSyncEOF
		}
		return buf[:n], nil
	}
}

func (s *syncSocket) recv() (syncMsg, error) {
	var m syncMsg
	b, err := s.recvRaw()
	if err != nil {
		return m, err
	}
	if m, err = decodeSyncBinary(b); err != nil {
		return m, fmt.Errorf("decode sync message: %w", err)
	}
	return m, nil
}

// expect receives one message and fails unless it is of type t; an error
// message from the peer becomes the returned error.
func (s *syncSocket) expect(t syncType) (syncMsg, error) {
	m, err := s.recv()
	if err != nil {
		return m, err
	}
	if m.Type == syncError {
		return m, m.initError()
	}
	if m.Type != t {
		return m, fmt.Errorf("sync: expected %q, got %q", t, m.Type)
	}
	return m, nil
}

func (s *syncSocket) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// forwardLogs makes the process-wide logrus logger of init (or of an exec'd
// process), which the library code running there logs to, send its
// messages to the parent over sock (syncLog), as crun does: they end in
// the caller's --log file, in its format, never in the container's stdio.
// Once the socket is closed (init is set up and waits for start: its
// parent has gone), warnings and errors go to stderr, the only way left to
// tell anyone; the rest is dropped.
func forwardLogs(sock *syncSocket, level string) {
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		lvl = logrus.WarnLevel
	}
	logrus.SetLevel(lvl)
	logrus.SetOutput(io.Discard)
	logrus.AddHook(&logForwarder{sock: sock})
}

type logForwarder struct{ sock *syncSocket }

func (h *logForwarder) Levels() []logrus.Level { return logrus.AllLevels }

func (h *logForwarder) Fire(e *logrus.Entry) error {
	err := h.sock.send(syncMsg{Type: syncLog, Log: &logEntry{Level: e.Level.String(), Msg: e.Message}})
	if err != nil && e.Level <= logrus.WarnLevel {
		fmt.Fprintf(os.Stderr, "nanobox-runc init: %s: %s\n", e.Level, e.Message)
	}
	return nil
}

// logTo hands a message init forwarded to log, at its level.
func logTo(log Logger, e *logEntry) {
	if e == nil {
		return
	}
	lvl, err := logrus.ParseLevel(e.Level)
	if err != nil {
		lvl = logrus.WarnLevel
	}
	switch {
	case lvl >= logrus.DebugLevel:
		log.Debugf("%s", e.Msg)
	case lvl == logrus.InfoLevel:
		log.Infof("%s", e.Msg)
	case lvl == logrus.WarnLevel:
		log.Warnf("%s", e.Msg)
	default:
		log.Errorf("%s", e.Msg)
	}
}

// logLevelOf is the level init forwards messages from, for log: a
// logrus logger's own level; everything for another Logger; only errors
// for none (they are dropped, but init's are also its returned error).
func logLevelOf(log Logger) string {
	if log == nil {
		return logrus.ErrorLevel.String()
	}
	if l, ok := log.(interface{ GetLevel() logrus.Level }); ok {
		return l.GetLevel().String()
	}
	return logrus.TraceLevel.String()
}

func newSyncPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("create sync socketpair: %w", err)
	}
	// init needs room for the whole config in one packet.
	for _, fd := range fds {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, maxSyncMsg)
	}
	return os.NewFile(uintptr(fds[0]), "sync-parent"), os.NewFile(uintptr(fds[1]), "sync-child"), nil
}

// errorKinds map ErrorKind values to the sentinel errors they stand for.
var errorKinds = map[string]error{
	"not-found":      ErrProgramNotFound,
	"not-executable": ErrProgramNotExecutable,
}

// errorKindOf classifies an error of init's: lookPath's *exec.Error is a
// missing program (exec.ErrNotFound, or a path that does not exist) or one
// that may not be executed (fs.ErrPermission).
func errorKindOf(err error) string {
	var ee *exec.Error
	switch {
	case !errors.As(err, &ee):
		return ""
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return "not-found"
	case errors.Is(err, fs.ErrPermission):
		return "not-executable"
	}
	return ""
}

// initError is init's error text as the caller's error, matching the
// sentinel of its kind (errors.Is) while reading exactly as init wrote it.
func (m *syncMsg) initError() error {
	if kind, ok := errorKinds[m.ErrorKind]; ok {
		return &kindError{msg: m.Error, kind: kind}
	}
	return &SetupError{msg: m.Error}
}

type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }
