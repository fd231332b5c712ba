package libbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The filter is compiled to BPF by libseccomp and installed with seccomp(2)
// directly, not with seccomp_load: the flags are then whatever the kernel
// has (libseccomp 2.5 knows no WAIT_KILLABLE_RECV), installing is a single
// system call with nothing of libseccomp's after it, and libseccomp never
// sets no_new_privs behind the config's back.

var seccompFlagBits = map[SeccompFlag]uintptr{
	SeccompFlagLog:              unix.SECCOMP_FILTER_FLAG_LOG,
	SeccompFlagSpecAllow:        unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW,
	SeccompFlagWaitKillableRecv: unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
}

// seccompFlagKernel says which kernel first has each flag, for errors.
var seccompFlagKernel = map[SeccompFlag]string{
	SeccompFlagLog:              "4.14",
	SeccompFlagSpecAllow:        "4.17",
	SeccompFlagWaitKillableRecv: "5.19",
}

// seccompActionBits are the SECCOMP_RET_* values, for asking the kernel
// whether it has an action (SECCOMP_GET_ACTION_AVAIL).
var seccompActionBits = map[SeccompAction]uint32{
	SeccompKill:        unix.SECCOMP_RET_KILL_THREAD,
	SeccompKillThread:  unix.SECCOMP_RET_KILL_THREAD,
	SeccompKillProcess: unix.SECCOMP_RET_KILL_PROCESS,
	SeccompTrap:        unix.SECCOMP_RET_TRAP,
	SeccompErrno:       unix.SECCOMP_RET_ERRNO,
	SeccompTrace:       unix.SECCOMP_RET_TRACE,
	SeccompAllow:       unix.SECCOMP_RET_ALLOW,
	SeccompLog:         unix.SECCOMP_RET_LOG,
	SeccompNotify:      unix.SECCOMP_RET_USER_NOTIF,
}

var seccompOps = map[SeccompOp]libseccomp.ScmpCompareOp{
	SeccompEqual:          libseccomp.CompareEqual,
	SeccompNotEqual:       libseccomp.CompareNotEqual,
	SeccompLess:           libseccomp.CompareLess,
	SeccompLessOrEqual:    libseccomp.CompareLessOrEqual,
	SeccompGreater:        libseccomp.CompareGreater,
	SeccompGreaterOrEqual: libseccomp.CompareGreaterEqual,
	SeccompMaskedEqual:    libseccomp.CompareMaskedEqual,
}

// seccompProgram is a compiled filter, ready to install.
type seccompProgram struct {
	filter []unix.SockFilter
	// flags is the flags argument of seccomp(2), as install passes it
	// (and logSeccompFlags logs it): set once, by newSeccompProgram.
	flags uintptr
	// listener: the filter returns a notify fd for s.ListenerPath.
	listener bool
}

func scmpAction(a SeccompAction, errno *uint) libseccomp.ScmpAction {
	code := int16(unix.EPERM)
	if errno != nil {
		code = int16(*errno)
	}
	switch a {
	case SeccompKill, SeccompKillThread:
		return libseccomp.ActKillThread
	case SeccompKillProcess:
		return libseccomp.ActKillProcess
	case SeccompTrap:
		return libseccomp.ActTrap
	case SeccompErrno:
		return libseccomp.ActErrno.SetReturnCode(code)
	case SeccompTrace:
		return libseccomp.ActTrace.SetReturnCode(code)
	case SeccompAllow:
		return libseccomp.ActAllow
	case SeccompLog:
		return libseccomp.ActLog
	case SeccompNotify:
		return libseccomp.ActNotify
	}
	return libseccomp.ActInvalid
}

// compileSeccomp turns s into BPF for this machine. Every check that can
// fail is made here, while init can still report to create: the kernel's
// support for the actions and flags used, the architectures, the rules.
func compileSeccomp(s *Seccomp) (*seccompProgram, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := checkSeccompKernel(s); err != nil {
		return nil, err
	}
	// A binary tree over the syscall numbers rather than libseccomp's
	// default list, which the kernel walks once per syscall number when it
	// installs the filter (to find the ones it can allow without running
	// it): for Docker's default profile 1312 instructions instead of 1067,
	// and an install in half the time (BenchmarkSeccompInstallDefault).
	// Same decisions. A profile whose tree is too long for the kernel,
	// while its list is not, gets the list, as does libseccomp older than
	// 2.5 (API 4).
	api, err := libseccomp.GetAPI()
	tree := err == nil && api >= 4
	bpf, err := seccompBPF(s, tree)
	var long *filterTooLongError
	if tree && errors.As(err, &long) {
		bpf, err = seccompBPF(s, false)
	}
	if err != nil {
		return nil, err
	}
	return newSeccompProgram(s, bpf), nil
}

// maxSeccompInsns is the longest program the kernel takes (a variable for
// the tests).
var maxSeccompInsns = unix.BPF_MAXINSNS

// filterTooLongError: the program is longer than the kernel takes.
type filterTooLongError struct{ n int }

func (e *filterTooLongError) Error() string {
	return fmt.Sprintf("the filter has %d instructions, more than the kernel's %d: use fewer rules", e.n, maxSeccompInsns)
}

// seccompBPF is the program of s (checked by compileSeccomp), laid out as
// a binary tree or as libseccomp's default list.
func seccompBPF(s *Seccomp, tree bool) ([]unix.SockFilter, error) {
	defAct := scmpAction(s.DefaultAction, s.DefaultErrno)
	filter, err := libseccomp.NewFilter(defAct)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	defer filter.Release()
	if tree {
		if err := filter.SetOptimize(2); err != nil {
			return nil, fmt.Errorf("seccomp: binary tree layout: %w", err)
		}
	}
	for _, name := range s.Architectures {
		arch, err := libseccomp.GetArchFromString(name)
		if err != nil {
			return nil, fmt.Errorf("seccomp: architecture %q: %w", name, err)
		}
		if err := filter.AddArch(arch); err != nil {
			return nil, fmt.Errorf("seccomp: architecture %q: %w", name, err)
		}
	}
	for i, r := range s.Syscalls {
		if err := addSeccompRule(filter, defAct, r); err != nil {
			return nil, fmt.Errorf("seccomp: syscalls[%d]: %w", i, err)
		}
	}
	bpf, err := exportBPF(filter)
	if err != nil {
		return nil, fmt.Errorf("seccomp: export filter: %w", err)
	}
	if needsENOSYSStub(s) {
		arches, err := enosysArches(s)
		if err != nil {
			return nil, err
		}
		stub, err := enosysStub(arches)
		if err != nil {
			return nil, fmt.Errorf("seccomp: ENOSYS stub: %w", err)
		}
		bpf = append(stub, bpf...)
	}
	if len(bpf) > maxSeccompInsns {
		return nil, fmt.Errorf("seccomp: %w", &filterTooLongError{len(bpf)})
	}
	return bpf, nil
}

// newSeccompProgram is the program of profile s compiled to filter.
func newSeccompProgram(s *Seccomp, filter []unix.SockFilter) *seccompProgram {
	p := &seccompProgram{filter: filter, listener: s.usesNotify()}
	for _, f := range s.Flags {
		p.flags |= seccompFlagBits[f]
	}
	if p.listener {
		p.flags |= unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	return p
}

func addSeccompRule(filter *libseccomp.ScmpFilter, defAct libseccomp.ScmpAction, r SeccompRule) error {
	act := scmpAction(r.Action, r.Errno)
	if act == defAct {
		// libseccomp refuses a rule that does what the default does;
		// the rule is redundant, not wrong (runc skips it too).
		return nil
	}
	var conds []libseccomp.ScmpCondition
	var perIndex [maxArgs]int
	repeated := false
	for _, a := range r.Args {
		vals := []uint64{a.Value}
		if a.Op == SeccompMaskedEqual {
			vals = append(vals, a.ValueTwo)
		}
		c, err := libseccomp.MakeCondition(a.Index, seccompOps[a.Op], vals...)
		if err != nil {
			return fmt.Errorf("argument %d %s %d: %w", a.Index, a.Op, a.Value, err)
		}
		conds = append(conds, c)
		perIndex[a.Index]++
		repeated = repeated || perIndex[a.Index] > 1
	}
	for _, name := range r.Names {
		nr, err := libseccomp.GetSyscallFromName(name)
		if err != nil {
			// Unknown to libseccomp for every architecture; specconv
			// has already logged it at debug level in the runtime.
			continue
		}
		switch {
		case len(conds) == 0:
			err = filter.AddRule(nr, act)
		case repeated:
			// Conditions on the same argument can only be OR-ed:
			// one rule each (runc does the same).
			for _, c := range conds {
				if err = filter.AddRuleConditional(nr, act, []libseccomp.ScmpCondition{c}); err != nil {
					break
				}
			}
		default:
			err = filter.AddRuleConditional(nr, act, conds)
		}
		if err != nil {
			return fmt.Errorf("add rule for %s: %w", name, err)
		}
	}
	return nil
}

// exportBPF has libseccomp write the program into a memfd (the in-memory
// export is libseccomp 2.6) and reads it back as sock_filter instructions
// (decodeSeccompFilter, as init reads the ones the runtime sends).
func exportBPF(filter *libseccomp.ScmpFilter) ([]unix.SockFilter, error) {
	fd, err := unix.MemfdCreate("seccomp-bpf", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "seccomp-bpf")
	defer f.Close()
	if err := filter.ExportBPF(f); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	const insnSize = int(unsafe.Sizeof(unix.SockFilter{}))
	if len(raw) == 0 || len(raw)%insnSize != 0 {
		return nil, fmt.Errorf("libseccomp wrote %d bytes, not a whole number of instructions", len(raw))
	}
	if n := len(raw) / insnSize; n > maxSeccompInsns {
		return nil, &filterTooLongError{n}
	}
	return decodeSeccompFilter(raw)
}

// install loads the filter on the calling thread (which must be the one
// that executes the user program). With a notify rule it returns the
// listener fd, else -1. The kernel allows it only with no_new_privs set or
// CAP_SYS_ADMIN in the thread's user namespace.
func (p *seccompProgram) install() (int, error) {
	prog := unix.SockFprog{Len: uint16(len(p.filter)), Filter: &p.filter[0]}
	// RawSyscall: nothing of the Go runtime's own runs between here and
	// the return, so nothing of it is filtered either.
	r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, p.flags, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		err := fmt.Errorf("seccomp: install filter: %w", errno)
		if errno == unix.EACCES {
			err = fmt.Errorf("%w: the process needs no_new_privs or CAP_SYS_ADMIN", err)
		}
		return -1, err
	}
	if p.listener {
		return int(r), nil
	}
	return -1, nil
}

// checkSeccompKernel fails for an action or flag the running kernel lacks,
// naming it, instead of letting the filter fail to load after `start`.
func checkSeccompKernel(s *Seccomp) error {
	check := func(a SeccompAction) error {
		if !seccompActionAvailable(a) {
			return fmt.Errorf("seccomp: action %s is not supported by this kernel", a)
		}
		return nil
	}
	if err := check(s.DefaultAction); err != nil {
		return err
	}
	for _, r := range s.Syscalls {
		if err := check(r.Action); err != nil {
			return err
		}
	}
	for _, f := range s.Flags {
		if !seccompFlagAvailable(f) {
			return fmt.Errorf("seccomp: flag %s is not supported by this kernel (it needs Linux %s)", f, seccompFlagKernel[f])
		}
	}
	return nil
}

func seccompActionAvailable(a SeccompAction) bool {
	bits, ok := seccompActionBits[a]
	if !ok {
		return false
	}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&bits)))
	if errno != 0 {
		return false
	}
	// libseccomp must be able to generate it too (notify needs API level
	// 6, log and kill-process 3).
	api, _ := libseccomp.GetAPI()
	switch a {
	case SeccompNotify:
		return api >= 6
	case SeccompLog, SeccompKillProcess:
		return api >= 3
	}
	return true
}

// seccompFlagAvailable asks the kernel: seccomp(2) with a NULL program
// fails with EFAULT once the flags are accepted, EINVAL before (runc
// probes the same way).
func seccompFlagAvailable(f SeccompFlag) bool {
	bits, ok := seccompFlagBits[f]
	if !ok {
		return false
	}
	if f == SeccompFlagWaitKillableRecv {
		bits |= unix.SECCOMP_FILTER_FLAG_NEW_LISTENER // meaningless alone: EINVAL
	}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, bits, 0)
	return errno == unix.EFAULT
}

// SeccompFlagSupported reports whether the running kernel takes flag f.
func SeccompFlagSupported(f SeccompFlag) bool {
	return seccompFlagAvailable(f)
}

// SeccompSupport is what this build and the running kernel can enforce,
// for `features`.
type SeccompSupport struct {
	Actions []SeccompAction
	Flags   []SeccompFlag
	// Archs are the libseccomp architecture names the library can filter.
	Archs []string
	// LibseccompVersion is the version of the libseccomp linked in.
	LibseccompVersion string
}

// ProbeSeccomp asks the kernel and libseccomp what they support.
func ProbeSeccomp() SeccompSupport {
	var s SeccompSupport
	for _, a := range []SeccompAction{SeccompKill, SeccompKillProcess, SeccompKillThread, SeccompTrap,
		SeccompErrno, SeccompTrace, SeccompAllow, SeccompLog, SeccompNotify} {
		if seccompActionAvailable(a) {
			s.Actions = append(s.Actions, a)
		}
	}
	for _, f := range []SeccompFlag{SeccompFlagLog, SeccompFlagSpecAllow, SeccompFlagWaitKillableRecv} {
		if seccompFlagAvailable(f) {
			s.Flags = append(s.Flags, f)
		}
	}
	if filter, err := libseccomp.NewFilter(libseccomp.ActAllow); err == nil {
		for _, name := range seccompArchNames {
			if arch, err := libseccomp.GetArchFromString(name); err == nil && filter.AddArch(arch) == nil {
				s.Archs = append(s.Archs, name)
			}
		}
		filter.Release()
	}
	major, minor, micro := libseccomp.GetLibraryVersion()
	s.LibseccompVersion = fmt.Sprintf("%d.%d.%d", major, minor, micro)
	return s
}

// seccompArchNames are the architecture names Seccomp.Architectures takes
// (libseccomp's).
var seccompArchNames = []string{
	"x86", "amd64", "x32", "arm", "arm64", "mips", "mips64", "mips64n32", "mipsel", "mipsel64",
	"mipsel64n32", "ppc", "ppc64", "ppc64le", "s390", "s390x", "parisc", "parisc64", "riscv64",
	"loong64", "m68k", "sh", "sheb",
}

// SeccompSyscallKnown reports whether libseccomp knows the system call name
// (for some architecture); an unknown one is skipped when the filter is
// compiled.
func SeccompSyscallKnown(name string) bool {
	_, err := libseccomp.GetSyscallFromName(name)
	return err == nil
}

// The notify fd crosses from init to the runtime in two packets: a
// syncSeccompFd message, then one byte carrying the fd (SCM_RIGHTS). The
// runtime, in the host's mount namespace and with the caller's
// credentials, is the one that can reach ListenerPath.

// sendSeccompFd passes the notify fd to the runtime and closes it.
func sendSeccompFd(sock *syncSocket, fd int) error {
	defer unix.Close(fd)
	if err := sock.send(syncMsg{Type: syncSeccompFd}); err != nil {
		return err
	}
	if err := unix.Sendmsg(int(sock.f.Fd()), []byte{0}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("seccomp: send notify fd to the runtime: %w", err)
	}
	return nil
}

// recvSeccompFd receives the packet sendSeccompFd sends after its message.
func recvSeccompFd(sock *syncSocket) (int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		_, oobn, _, _, err := unix.Recvmsg(int(sock.f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("seccomp: receive notify fd: %w", err)
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return -1, fmt.Errorf("seccomp: receive notify fd: %w", err)
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
		return -1, errors.New("seccomp: init sent no notify fd")
	}
}

// seccompFdName is the name of the notify fd in ContainerProcessState.fds
// (runtime-spec's specs.SeccompFdName).
const seccompFdName = "seccompFd"

// containerProcessState is runtime-spec's ContainerProcessState, the
// message a seccomp listener receives with the notify fd.
type containerProcessState struct {
	Version  string          `json:"ociVersion"`
	Fds      []string        `json:"fds"`
	Pid      int             `json:"pid"`
	Metadata string          `json:"metadata,omitempty"`
	State    json.RawMessage `json:"state"`
}

// deliverSeccompFd is the runtime's side of a syncSeccompFd message: it
// receives the notify fd from init and hands it, with the container's
// state (the OCI state JSON, status "creating"), to the listener at
// s.ListenerPath. create fails if the listener cannot be reached: the
// container would otherwise run with system calls nobody answers.
func deliverSeccompFd(sock *syncSocket, s *Seccomp, state []byte) error {
	fd, err := recvSeccompFd(sock)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if s == nil || s.ListenerPath == "" {
		return errors.New("seccomp: init sent a notify fd but no listenerPath is configured")
	}
	var st struct {
		Version string `json:"ociVersion"`
		Pid     int    `json:"pid"`
	}
	if err := json.Unmarshal(state, &st); err != nil {
		return fmt.Errorf("seccomp: container state: %w", err)
	}
	msg, err := json.Marshal(containerProcessState{
		Version:  st.Version,
		Fds:      []string{seccompFdName},
		Pid:      st.Pid,
		Metadata: s.ListenerMetadata,
		State:    state,
	})
	if err != nil {
		return fmt.Errorf("seccomp: encode container process state: %w", err)
	}
	return sendToListener(s.ListenerPath, msg, fd)
}

func sendToListener(path string, msg []byte, fd int) error {
	conn, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("seccomp: listener socket: %w", err)
	}
	defer unix.Close(conn)
	if err := unix.Connect(conn, &unix.SockaddrUnix{Name: path}); err != nil {
		return fmt.Errorf("seccomp: failed to connect with seccomp agent at listenerPath %s: %w: is the seccomp agent running?", path, err)
	}
	if err := unix.Sendmsg(conn, msg, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("seccomp: send notify fd to listenerPath %s: %w", path, err)
	}
	return nil
}
