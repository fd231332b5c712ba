package libbox

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Seccomp is a seccomp-bpf system call filter: the whole of OCI
// linux.seccomp, in libbox's own terms (specconv converts; the SCMP_* names
// are not used here).
//
// The filter is compiled with libseccomp while the container is created, so
// a bad filter fails create; it is installed on init's thread as late as the
// kernel allows, see applyFilters.
type Seccomp struct {
	// DefaultAction applies to every system call no rule matches. It may
	// not be SeccompNotify.
	DefaultAction SeccompAction `json:"defaultAction"`
	// DefaultErrno is the errno of a DefaultAction SeccompErrno (or the
	// message data of SeccompTrace); nil means EPERM.
	DefaultErrno *uint `json:"defaultErrno,omitempty"`
	// Architectures are accepted besides the native one, by libseccomp name
	// ("x86", "x32", "arm", "arm64"...). A system call made through any
	// other architecture's ABI kills the thread.
	Architectures []string `json:"architectures,omitempty"`
	// Flags are SECCOMP_FILTER_FLAG_* the filter is installed with.
	Flags []SeccompFlag `json:"flags,omitempty"`
	// ListenerPath is an AF_UNIX stream socket on the host: when a rule uses
	// SeccompNotify, the runtime connects to it and sends the filter's
	// notify fd with the container's state (OCI "ContainerProcessState").
	ListenerPath string `json:"listenerPath,omitempty"`
	// ListenerMetadata is passed through to the listener as "metadata".
	ListenerMetadata string `json:"listenerMetadata,omitempty"`
	// Syscalls are the rules, in order. A name this architecture does not
	// know is skipped (as runc does: profiles list the syscalls of every
	// kernel and architecture).
	Syscalls []SeccompRule `json:"syscalls,omitempty"`
}

// SeccompAction is what the filter does with a system call.
type SeccompAction string

// The actions: every one of OCI's.
const (
	SeccompKill        SeccompAction = "kill"         // kill the calling thread (OCI SCMP_ACT_KILL)
	SeccompKillThread  SeccompAction = "kill-thread"  // the same, by its newer name
	SeccompKillProcess SeccompAction = "kill-process" // kill the whole thread group
	SeccompTrap        SeccompAction = "trap"         // send SIGSYS
	SeccompErrno       SeccompAction = "errno"        // fail with Errno (EPERM when unset)
	SeccompTrace       SeccompAction = "trace"        // notify a ptrace tracer (ENOSYS without one)
	SeccompAllow       SeccompAction = "allow"
	SeccompLog         SeccompAction = "log"    // allow, and log to the audit log
	SeccompNotify      SeccompAction = "notify" // ask the listener (ListenerPath)
)

// SeccompOp compares one system call argument.
type SeccompOp string

// The comparison operators: every one of OCI's.
const (
	SeccompEqual          SeccompOp = "=="
	SeccompNotEqual       SeccompOp = "!="
	SeccompLess           SeccompOp = "<"
	SeccompLessOrEqual    SeccompOp = "<="
	SeccompGreater        SeccompOp = ">"
	SeccompGreaterOrEqual SeccompOp = ">="
	// SeccompMaskedEqual is true when arg & Value == ValueTwo.
	SeccompMaskedEqual SeccompOp = "&=="
)

// SeccompFlag is a SECCOMP_FILTER_FLAG_* the filter is installed with.
// (SECCOMP_FILTER_FLAG_TSYNC has no equivalent: only the thread that
// executes the user program matters, and it is the one filtered.)
type SeccompFlag string

// The flags.
const (
	SeccompFlagLog              SeccompFlag = "log"                // audit-log every action but allow
	SeccompFlagSpecAllow        SeccompFlag = "spec-allow"         // keep speculative store bypass mitigation off
	SeccompFlagWaitKillableRecv SeccompFlag = "wait-killable-recv" // notified syscalls wait killably once received
)

// SeccompRule applies Action to the system calls Names when every one of
// Args matches. When several Args compare the same argument, each of them
// becomes a rule of its own (they are OR-ed, runc's behaviour, which
// Docker's profile relies on).
type SeccompRule struct {
	Names  []string      `json:"names"`
	Action SeccompAction `json:"action"`
	// Errno is the errno of SeccompErrno or the data of SeccompTrace; nil
	// means EPERM. It is an error with any other action.
	Errno *uint        `json:"errno,omitempty"`
	Args  []SeccompArg `json:"args,omitempty"`
}

// SeccompArg compares argument Index (0 to 5) of the system call.
type SeccompArg struct {
	Index    uint      `json:"index"`
	Value    uint64    `json:"value"`
	ValueTwo uint64    `json:"valueTwo,omitempty"`
	Op       SeccompOp `json:"op"`
}

// maxErrno is the largest errno the kernel returns from a filter
// (MAX_ERRNO); the action's data field holds 16 bits for SeccompTrace.
const (
	maxErrno     = 4095
	maxTraceData = 0xffff
	maxArgs      = 6
)

func (a SeccompAction) valid() bool {
	switch a {
	case SeccompKill, SeccompKillThread, SeccompKillProcess, SeccompTrap, SeccompErrno,
		SeccompTrace, SeccompAllow, SeccompLog, SeccompNotify:
		return true
	}
	return false
}

func (o SeccompOp) valid() bool {
	switch o {
	case SeccompEqual, SeccompNotEqual, SeccompLess, SeccompLessOrEqual, SeccompGreater,
		SeccompGreaterOrEqual, SeccompMaskedEqual:
		return true
	}
	return false
}

// checkErrno rejects an errno on an action that has none (the runtime spec
// requires the runtime to fail) and one the kernel would truncate.
func checkErrno(a SeccompAction, errno *uint) error {
	if errno == nil {
		return nil
	}
	switch a {
	case SeccompErrno:
		if *errno > maxErrno {
			return fmt.Errorf("errno %d is larger than the kernel's MAX_ERRNO (%d)", *errno, maxErrno)
		}
	case SeccompTrace:
		if *errno > maxTraceData {
			return fmt.Errorf("trace data %d does not fit in 16 bits", *errno)
		}
	default:
		return fmt.Errorf("action %q takes no errno: only errno and trace do", a)
	}
	return nil
}

// Validate checks what can be checked without the kernel or libseccomp:
// the actions, operators, errnos and the use of the notify listener.
func (s *Seccomp) Validate() error {
	if !s.DefaultAction.valid() {
		return fmt.Errorf("seccomp: unknown default action %q", s.DefaultAction)
	}
	if s.DefaultAction == SeccompNotify {
		// Every system call of init, up to execve, would wait for the
		// listener, which only gets the fd through one of them.
		return errors.New("seccomp: notify cannot be the default action")
	}
	if err := checkErrno(s.DefaultAction, s.DefaultErrno); err != nil {
		return fmt.Errorf("seccomp: default action: %w", err)
	}
	for _, f := range s.Flags {
		if _, ok := seccompFlagBits[f]; !ok {
			return fmt.Errorf("seccomp: unknown flag %q", f)
		}
	}
	notify := false
	for i, r := range s.Syscalls {
		if !r.Action.valid() {
			return fmt.Errorf("seccomp: syscalls[%d]: unknown action %q", i, r.Action)
		}
		if len(r.Names) == 0 {
			return fmt.Errorf("seccomp: syscalls[%d]: no syscall names", i)
		}
		if err := checkErrno(r.Action, r.Errno); err != nil {
			return fmt.Errorf("seccomp: syscalls[%d]: %w", i, err)
		}
		for j, a := range r.Args {
			if a.Index >= maxArgs {
				return fmt.Errorf("seccomp: syscalls[%d].args[%d]: index %d is not an argument number (0 to 5)", i, j, a.Index)
			}
			if !a.Op.valid() {
				return fmt.Errorf("seccomp: syscalls[%d].args[%d]: unknown operator %q", i, j, a.Op)
			}
		}
		if r.Action != SeccompNotify {
			continue
		}
		notify = true
		for _, n := range r.Names {
			// Init passes the notify fd to the runtime with sendmsg and
			// then writes to its sync socket: a notification on either
			// could never be answered (runc refuses write for the same
			// reason).
			if n == "write" || n == "sendmsg" {
				return fmt.Errorf("seccomp: syscalls[%d]: SCMP_ACT_NOTIFY cannot be used for the %s syscall: the runtime needs it to hand the notify fd to the listener", i, n)
			}
		}
	}
	if notify {
		if s.ListenerPath == "" {
			return errors.New("seccomp: a rule uses notify but listenerPath is not set")
		}
		if !filepath.IsAbs(s.ListenerPath) {
			return fmt.Errorf("seccomp: listenerPath %q must be an absolute path", s.ListenerPath)
		}
	}
	if s.hasFlag(SeccompFlagWaitKillableRecv) && !notify {
		return fmt.Errorf("seccomp: flag %s needs a rule with the notify action", SeccompFlagWaitKillableRecv)
	}
	return nil
}

// usesNotify reports whether a rule notifies the listener.
func (s *Seccomp) usesNotify() bool {
	for _, r := range s.Syscalls {
		if r.Action == SeccompNotify {
			return true
		}
	}
	return false
}

// installOnly is s without what a compiled program already holds: the
// flags and whether the filter returns a notify fd are what installing it
// takes (newSeccompProgram); the notify rules are kept, unexpanded, for
// the latter.
func (s *Seccomp) installOnly() *Seccomp {
	out := &Seccomp{DefaultAction: s.DefaultAction, Flags: s.Flags, ListenerPath: s.ListenerPath, ListenerMetadata: s.ListenerMetadata}
	for _, r := range s.Syscalls {
		if r.Action == SeccompNotify {
			out.Syscalls = append(out.Syscalls, SeccompRule{Names: r.Names, Action: r.Action})
		}
	}
	return out
}

func (s *Seccomp) hasFlag(f SeccompFlag) bool {
	for _, g := range s.Flags {
		if g == f {
			return true
		}
	}
	return false
}
